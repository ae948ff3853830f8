// strata::FunctionRef<R(Args...)>: a reference to a callable, for callbacks that are called
// only while the call that receives them runs (visit_range's visitor). It owns nothing and
// allocates nothing: it holds the callable's address and one function pointer, so passing
// a lambda costs no heap allocation whatever it captures, where a std::function would take
// one for a closure of more than two pointers.
//
// Keep it as a parameter only. It refers to the callable it was made from, which must
// outlive it: a FunctionRef made from a temporary lambda is valid until the end of the
// full expression (the call), not after. To keep a callback, keep a std::function and pass
// that; a FunctionRef made from an empty std::function (or a null function pointer) is
// empty, which a callee can test before calling.
#pragma once

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace strata {

namespace function_ref_detail {
// F is a callable a FunctionRef<R(Args...)> (Ref) may refer to, and not a Ref itself.
template <class F, class Ref, class R, class... Args>
concept ReferableAs =
    !std::is_same_v<std::remove_cvref_t<F>, Ref> && std::is_invocable_r_v<R, F&, Args...>;
}  // namespace function_ref_detail

template <class Signature>
class FunctionRef;

template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  // An empty reference (calling it is undefined; test it first).
  constexpr FunctionRef() noexcept = default;

  // Implicit, as one is made at every call; the constraint leaves copies of a FunctionRef
  // to the copy constructor.
  template <function_ref_detail::ReferableAs<FunctionRef, R, Args...> F>
  // NOLINTNEXTLINE(google-explicit-constructor,bugprone-forwarding-reference-overload)
  FunctionRef(F&& f) noexcept
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_(&call<std::remove_reference_t<F>>) {
    if constexpr (std::is_constructible_v<bool, F&>) {
      if (!static_cast<bool>(f)) call_ = nullptr;  // an empty std::function, a null pointer
    }
  }

  explicit operator bool() const noexcept { return call_ != nullptr; }

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  template <class F>
  static R call(void* object, Args... args) {
    return std::invoke(*static_cast<F*>(object), std::forward<Args>(args)...);
  }

  void* object_ = nullptr;
  R (*call_)(void*, Args...) = nullptr;
};

}  // namespace strata
