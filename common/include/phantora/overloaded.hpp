// One visitor from several lambdas, for std::visit over a variant whose alternatives are
// treated differently (kernels::OpDesc): each lambda takes the alternatives it names.
#pragma once

namespace phantora {

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
// Spelled out: not every compiler this builds with deduces an aggregate's template arguments.
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

}  // namespace phantora
