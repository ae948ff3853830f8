// strata::FunctionRef<R(Args...)>: a reference to a callable, for callbacks that are called
// only while the call that receives them runs (visit_range's visitor). It owns nothing and
// allocates nothing: it holds the callable's address (or a function's pointer) and one
// function pointer, so passing a lambda costs no heap allocation whatever it captures,
// where a std::function would take one for a closure of more than two pointers.
//
// Keep it as a parameter only. It refers to the callable it was made from, which must
// outlive it: a FunctionRef made from a temporary lambda is valid until the end of the
// full expression (the call), not after. To keep a callback, keep a std::function and pass
// that. A FunctionRef made from an empty std::function or a null function pointer is
// empty, which a callee can test before calling; any other callable makes a non-empty one.
#pragma once

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace strata {

namespace function_ref_detail {

template <class T>
inline constexpr bool kIsStdFunction = false;
template <class Signature>
inline constexpr bool kIsStdFunction<std::function<Signature>> = true;

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
  FunctionRef(F&& f) noexcept {
    using Callable = std::remove_reference_t<F>;
    using Decayed = std::decay_t<F>;
    if constexpr (std::is_function_v<Callable> ||
                  (std::is_pointer_v<Decayed> &&
                   std::is_function_v<std::remove_pointer_t<Decayed>>)) {
      // A function, or a pointer to one: kept by value, so a temporary pointer is fine.
      Decayed function = f;
      if (function == nullptr) return;
      target_.function = reinterpret_cast<void (*)()>(function);
      call_ = &call_function<Decayed>;
    } else {
      if constexpr (function_ref_detail::kIsStdFunction<std::remove_cv_t<Callable>>) {
        if (!f) return;  // an empty std::function makes an empty reference
      }
      target_.object = const_cast<void*>(static_cast<const void*>(std::addressof(f)));
      call_ = &call_object<Callable>;
    }
  }

  explicit operator bool() const noexcept { return call_ != nullptr; }

  R operator()(Args... args) const { return call_(target_, std::forward<Args>(args)...); }

 private:
  union Target {
    void* object;
    void (*function)();
  };

  template <class F>
  static R call_object(Target target, Args... args) {
    if constexpr (std::is_void_v<R>) {
      std::invoke(*static_cast<F*>(target.object), std::forward<Args>(args)...);
    } else {
      return std::invoke(*static_cast<F*>(target.object), std::forward<Args>(args)...);
    }
  }

  template <class Pointer>
  static R call_function(Target target, Args... args) {
    if constexpr (std::is_void_v<R>) {
      std::invoke(reinterpret_cast<Pointer>(target.function), std::forward<Args>(args)...);
    } else {
      return std::invoke(reinterpret_cast<Pointer>(target.function), std::forward<Args>(args)...);
    }
  }

  Target target_{nullptr};
  R (*call_)(Target, Args...) = nullptr;
};

}  // namespace strata
