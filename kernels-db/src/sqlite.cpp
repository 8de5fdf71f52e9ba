#include "sqlite.hpp"

#include <fmt/format.h>

#include "phantora/kernels/data_error.hpp"

namespace phantora::kernels::detail {

void sqlite_fail(sqlite3* db, std::string_view file, std::string_view what) {
  const int code = db != nullptr ? sqlite3_errcode(db) : SQLITE_ERROR;
  const char* msg = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(code);
  if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) {
    throw DataError(fmt::format("{}: not a Phantora kernel database, or a corrupt one ({}: {})",
                                file, what, msg));
  }
  throw DataError(fmt::format("{}: {}: {}", file, what, msg));
}

Statement::Statement(sqlite3* db, std::string_view file, std::string_view sql)
    : db_(db), file_(file) {
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) !=
      SQLITE_OK) {
    sqlite_fail(db_, file_, fmt::format("preparing '{}'", sql));
  }
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

Statement& Statement::bind(int index, std::string_view text) {
  if (sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()),
                        SQLITE_TRANSIENT) != SQLITE_OK) {
    sqlite_fail(db_, file_, "binding a value");
  }
  return *this;
}

Statement& Statement::bind(int index, int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) sqlite_fail(db_, file_, "binding");
  return *this;
}

Statement& Statement::bind(int index, double value) {
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) sqlite_fail(db_, file_, "binding");
  return *this;
}

Statement& Statement::bind_null(int index) {
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) sqlite_fail(db_, file_, "binding");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite_fail(db_, file_, "query");
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string Statement::text(int column) const {
  const unsigned char* t = sqlite3_column_text(stmt_, column);
  if (t == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(t),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

int64_t Statement::integer(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::real(int column) const {
  return sqlite3_column_double(stmt_, column);
}

void exec(sqlite3* db, std::string_view file, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    sqlite3_free(err);
    sqlite_fail(db, file, fmt::format("running '{}'", sql.substr(0, 60)));
  }
}

Transaction::Transaction(sqlite3* db, std::string_view file) : db_(db), file_(file) {
  exec(db_, file_, "BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  exec(db_, file_, "COMMIT");
  done_ = true;
}

}  // namespace phantora::kernels::detail
