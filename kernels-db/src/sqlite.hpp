// A thin RAII layer over the SQLite C API for kernel_db.cpp: a statement that binds, steps and
// reads columns, and errors that name the database file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <sqlite3.h>

namespace phantora::kernels::detail {

// Throws DataError "<file>: <what>: <sqlite message>".
[[noreturn]] void sqlite_fail(sqlite3* db, std::string_view file, std::string_view what);

class Statement {
 public:
  Statement(sqlite3* db, std::string_view file, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, double value);
  Statement& bind_null(int index);

  bool step();  // true: a row is available; false: done. Throws on error.
  void reset();

  std::string text(int column) const;
  int64_t integer(int column) const;
  double real(int column) const;

 private:
  sqlite3* db_;
  std::string file_;
  sqlite3_stmt* stmt_ = nullptr;
};

// Runs statements without results (DDL, PRAGMA, BEGIN/COMMIT).
void exec(sqlite3* db, std::string_view file, const std::string& sql);

// A transaction that rolls back unless committed.
class Transaction {
 public:
  Transaction(sqlite3* db, std::string_view file);  // BEGIN IMMEDIATE: takes the write lock
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  sqlite3* db_;
  std::string file_;
  bool done_ = false;
};

}  // namespace phantora::kernels::detail
