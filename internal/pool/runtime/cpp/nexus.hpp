// nexus.hpp: the nexus pool runtime for C++17, header only.
//
// A pool program holds plain C++ functions and registers each under its
// manifest mid; the runtime speaks the nexus pool protocol
// (docs/internals.md in the nexus repository) and converts arguments and
// results to and from JSON:
//
//     #include "nexus.hpp"
//
//     int fighterDamage(int ac) { return 27 - ac; }
//
//     struct Person { std::string name; int age; };
//     NEXUS_RECORD(Person, name, age)
//
//     Person older(Person p) { p.age += 1; return p; }
//
//     int main() {
//         nexus::Pool pool;
//         pool.add(9, fighterDamage);
//         pool.add(10, older);
//         return pool.serve();
//     }
//
// Build: g++ -std=c++17 -O2 -pthread -I<nexus runtime dir>/cpp pool.cpp -o pool-cpp.out
// It needs nlohmann/json (Debian: nlohmann-json3-dev) and POSIX.
//
// Supported argument and result types: bool, every integer type (range
// checked), float, double, std::string, std::vector, std::array, std::deque,
// std::list, std::set, std::unordered_set, std::pair,
// std::tuple, std::optional, std::map / std::unordered_map (string keys as
// JSON objects, other keys as arrays of [key, value]), structs declared with
// NEXUS_RECORD, nexus::Bytes (base64), std::nullptr_t (null),
// nlohmann::json and nexus::json (passed through), and any type with a
// nexus::Codec specialization. A function returning void sends null; one
// returning nexus::Content answers with MCP content blocks. Vectors of
// numbers (any depth) travel as raw arrays when nexus sends or asks for
// them (protocol 2), and skip json trees when they come as JSON.

#ifndef NEXUS_POOL_RUNTIME_HPP
#define NEXUS_POOL_RUNTIME_HPP

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <iostream>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <cxxabi.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

namespace nexus {

// json is the JSON value type of the runtime: nlohmann's, keeping object
// members in insertion order so that records keep their field order.
using json = nlohmann::ordered_json;

// The pool protocol version this runtime speaks.
inline constexpr int protocol_version = 2;

// Cancelled is thrown by throw_if_cancelled() and sleep_for() in a call that
// nexus has cancelled; the runtime turns it into the protocol's "cancelled"
// error. It does not derive from std::exception, so that
// `catch (const std::exception&)` in user code does not swallow it.
struct Cancelled {};

// AskError is thrown by elicit(), sample() and roots() when the client gives
// no answer: what() says why (the client did not declare the capability,
// it answered with an error, or the call cannot ask anyone).
struct AskError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// ConversionError reports a value that does not convert: the message names
// where ("argument 2 at [3].age: 300 does not fit in int8_t").
struct ConversionError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Bytes is raw data; it travels as a base64 string (the protocol's form for
// bytes, e.g. a function whose manifest return has a mime type).
struct Bytes {
    std::string data;
    Bytes() = default;
    explicit Bytes(std::string d) : data(std::move(d)) {}
};

// Codec<T> converts T from and to JSON. Specialize it for a type of your own:
//
//     template <> struct nexus::Codec<Point> {
//         static std::string name() { return "Point"; }
//         static Point decode(const nexus::json& j);   // throw on bad input
//         static nexus::json encode(const Point& p);
//     };
//
// The second parameter exists for the runtime's own partial
// specializations; leave it out.
template <class T, class Enable = void>
struct Codec;

namespace detail {

// PathError travels up through nested codecs, each adding where it was.
struct PathError {
    std::string path;     // ".people[2].age"
    std::string message;  // "300 does not fit in int8_t"
};

[[noreturn]] inline void fail(std::string message) { throw PathError{std::string(), std::move(message)}; }

template <class T>
inline constexpr bool dependent_false = false;

template <class T>
using plain = std::remove_cv_t<std::remove_reference_t<T>>;

// got describes a JSON value for a message: "a string", "2.5", "an array of 3".
inline std::string got(const json& j) {
    switch (j.type()) {
    case json::value_t::null:
        return "null";
    case json::value_t::boolean:
        return j.get<bool>() ? "true" : "false";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
        return j.dump();
    case json::value_t::string: {
        const auto& s = j.get_ref<const std::string&>();
        if (s.size() <= 40) return "the string " + json(s).dump();
        return "a string of " + std::to_string(s.size()) + " bytes";
    }
    case json::value_t::array:
        return "an array of " + std::to_string(j.size());
    case json::value_t::object:
        return "an object";
    default:
        return "a " + std::string(j.type_name());
    }
}

[[noreturn]] inline void expected(const std::string& what, const json& j) { fail("expected " + what + ", got " + got(j)); }

// with_segment runs f, adding the segment that make_segment() builds in
// front of the path of a PathError. The segment is built only on failure:
// a million elements that convert build no strings.
template <class M, class F>
decltype(auto) with_segment(M&& make_segment, F&& f) {
    try {
        return f();
    } catch (PathError& e) {
        e.path.insert(0, make_segment());
        throw;
    }
}

inline std::string index_segment(std::size_t i) { return "[" + std::to_string(i) + "]"; }

// with_path, with_index, with_field and with_key name where f works: "[3]",
// ".age", "[\"key\"]".
template <class F>
decltype(auto) with_path(const std::string& segment, F&& f) {
    return with_segment([&] { return segment; }, std::forward<F>(f));
}
template <class F>
decltype(auto) with_index(std::size_t i, F&& f) {
    return with_segment([i] { return index_segment(i); }, std::forward<F>(f));
}
template <class F>
decltype(auto) with_field(const char* name, F&& f) {
    return with_segment([name] { return std::string(".") + name; }, std::forward<F>(f));
}
template <class F>
decltype(auto) with_key(const std::string& key, F&& f) {
    return with_segment([&key] { return "[" + json(key).dump() + "]"; }, std::forward<F>(f));
}

// where formats "argument 2" plus the path inside it, if any.
inline std::string where(const std::string& what, const PathError& e) {
    return e.path.empty() ? what + ": " + e.message : what + " at " + e.path + ": " + e.message;
}

inline std::string demangle(const char* name) {
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
    return status == 0 && out ? std::string(out.get()) : std::string(name);
}

// --- integers ---------------------------------------------------------------

template <class T>
std::string integer_name() {
    if constexpr (std::is_same_v<T, char>) {
        return "char";
    } else {
        return std::string(std::is_signed_v<T> ? "int" : "uint") + std::to_string(sizeof(T) * 8) + "_t";
    }
}

template <class T>
[[noreturn]] void does_not_fit(const json& j) {
    fail(j.dump() + " does not fit in " + integer_name<T>());
}

template <class T>
T decode_integer(const json& j) {
    static_assert(sizeof(T) <= 8, "nexus: integers wider than 64 bits are not supported");
    using limits = std::numeric_limits<T>;
    if (j.is_number_unsigned()) {
        auto u = j.get<std::uint64_t>();
        if (u <= static_cast<std::uint64_t>(limits::max())) return static_cast<T>(u);
        does_not_fit<T>(j);
    }
    if (j.is_number_integer()) {
        auto v = j.get<std::int64_t>();
        if constexpr (std::is_signed_v<T>) {
            if (v >= static_cast<std::int64_t>(limits::min()) && v <= static_cast<std::int64_t>(limits::max()))
                return static_cast<T>(v);
        } else {
            if (v >= 0 && static_cast<std::uint64_t>(v) <= static_cast<std::uint64_t>(limits::max()))
                return static_cast<T>(v);
        }
        does_not_fit<T>(j);
    }
    if (j.is_number_float()) {
        // nlohmann reads integer literals beyond 64 bits as doubles, which
        // rounds them (-2^63-1 reads as -2^63): a whole double is taken only
        // while every integer up to it is exact (2^53); a larger one may be
        // a rounded literal, so it does not fit. A fraction is no integer.
        double x = j.get<double>();
        if (std::isfinite(x) && std::trunc(x) == x) {
            double bound = std::ldexp(1.0, limits::digits);  // 2^31 for int32_t, 2^32 for uint32_t
            double exact = std::ldexp(1.0, std::numeric_limits<double>::digits);  // 2^53
            double low = std::is_signed_v<T> ? -bound : 0.0;
            if (x >= low && x < bound && std::fabs(x) <= exact) return static_cast<T>(x);
            does_not_fit<T>(j);
        }
    }
    expected("an integer (" + integer_name<T>() + ")", j);
}

// --- floating point ----------------------------------------------------------

template <class T>
std::string floating_name() {
    if constexpr (std::is_same_v<T, float>) return "float";
    else if constexpr (std::is_same_v<T, double>) return "double";
    else return "long double";
}

// nonfinite_name is how NaN and the infinities travel, as strings where a
// Real is declared, since JSON has no numbers for them
// (docs/internals.md, "Values"); nullptr for a finite x.
inline const char* nonfinite_name(double x) {
    if (std::isnan(x)) return "NaN";
    if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
    return nullptr;
}

template <class T>
T decode_floating(const json& j) {
    if (j.is_string()) {
        const std::string& s = j.get_ref<const std::string&>();
        if (s == "NaN") return std::numeric_limits<T>::quiet_NaN();
        if (s == "Infinity") return std::numeric_limits<T>::infinity();
        if (s == "-Infinity") return -std::numeric_limits<T>::infinity();
    }
    if (!j.is_number()) expected("a number (" + floating_name<T>() + ")", j);
    double x = j.get<double>();
    if constexpr (std::is_same_v<T, float>) {
        if (std::isfinite(x) && std::fabs(x) > static_cast<double>(std::numeric_limits<float>::max()))
            fail(j.dump() + " does not fit in float");
    }
    return static_cast<T>(x);
}

// shortest_float is the double nearest the shortest decimal that reads back
// as f, so 0.1f goes out as 0.1 and not 0.10000000149011612.
inline double shortest_float(float f) {
    char buf[32];
    for (int precision = 1; precision <= 9; ++precision) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, static_cast<double>(f));
        if (std::strtof(buf, nullptr) == f) return std::strtod(buf, nullptr);
    }
    return static_cast<double>(f);
}

template <class T>
json encode_floating(T value) {
    if (const char* name = nonfinite_name(static_cast<double>(value))) return json(name);
    if constexpr (std::is_same_v<T, float>) return json(shortest_float(value));
    else return json(static_cast<double>(value));
}

// --- base64 ------------------------------------------------------------------

inline std::string base64_encode(const std::string& in) {
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 2 < in.size(); i += 3) {
        unsigned n = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8 | (unsigned char)in[i + 2];
        out += alphabet[n >> 18];
        out += alphabet[(n >> 12) & 63];
        out += alphabet[(n >> 6) & 63];
        out += alphabet[n & 63];
    }
    if (i + 1 == in.size()) {
        unsigned n = (unsigned char)in[i] << 16;
        out += alphabet[n >> 18];
        out += alphabet[(n >> 12) & 63];
        out += "==";
    } else if (i + 2 == in.size()) {
        unsigned n = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8;
        out += alphabet[n >> 18];
        out += alphabet[(n >> 12) & 63];
        out += alphabet[(n >> 6) & 63];
        out += '=';
    }
    return out;
}

inline std::string base64_decode(const std::string& in) {
    auto value = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        return -1;
    };
    if (in.size() % 4 != 0) fail("not base64: the length is not a multiple of 4");
    std::string out;
    out.reserve(in.size() / 4 * 3);
    for (std::size_t i = 0; i < in.size(); i += 4) {
        bool last = i + 4 == in.size();
        int pad = last ? (in[i + 3] == '=') + (in[i + 2] == '=' && in[i + 3] == '=') : 0;
        unsigned n = 0;
        for (int k = 0; k < 4 - pad; ++k) {
            int v = value(in[i + k]);
            if (v < 0) fail("not base64: bad character at " + std::to_string(i + k));
            n |= unsigned(v) << (18 - 6 * k);
        }
        out += char(n >> 16);
        if (pad < 2) out += char((n >> 8) & 255);
        if (pad < 1) out += char(n & 255);
    }
    return out;
}

// --- records -------------------------------------------------------------------

template <class C, class M>
struct Field {
    const char* name;
    M C::*member;
};

template <class C, class M>
constexpr Field<C, M> field(const char* name, M C::*member) {
    return {name, member};
}

// Found by argument-dependent lookup when NEXUS_RECORD declared T.
void nexus_record_fields();

template <class T, class = void>
struct is_record : std::false_type {};
template <class T>
struct is_record<T, std::void_t<decltype(nexus_record_fields(static_cast<const T*>(nullptr)))>> : std::true_type {};

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

}  // namespace detail

// --- codecs ------------------------------------------------------------------

// Records (NEXUS_RECORD) and, failing that, a compile error naming the type.
template <class T, class Enable>
struct Codec {
    static_assert(detail::is_record<T>::value,
                  "nexus: no JSON conversion for this type: declare a struct with NEXUS_RECORD(Type, field, ...) "
                  "or specialize nexus::Codec<Type>");

    static auto fields() { return nexus_record_fields(static_cast<const T*>(nullptr)); }
    static std::string name() { return nexus_record_name(static_cast<const T*>(nullptr)); }

    static T decode(const json& j) {
        if (!j.is_object()) detail::expected("an object (" + name() + ")", j);
        T value{};
        std::apply([&](const auto&... f) { (decode_field(j, value, f), ...); }, fields());
        return value;
    }

    static json encode(const T& value) {
        json out = json::object();
        std::apply([&](const auto&... f) { (encode_field(out, value, f), ...); }, fields());
        return out;
    }

private:
    template <class C, class M>
    static void decode_field(const json& j, T& value, const detail::Field<C, M>& f) {
        auto it = j.find(f.name);
        if (it == j.end()) {
            if constexpr (detail::is_optional<M>::value) return;  // left out: nothing
            detail::fail(std::string("missing field \"") + f.name + "\" of " + name());
        }
        value.*f.member = detail::with_field(f.name, [&] { return Codec<M>::decode(*it); });
    }

    template <class C, class M>
    static void encode_field(json& out, const T& value, const detail::Field<C, M>& f) {
        out[f.name] = detail::with_field(f.name, [&] { return Codec<M>::encode(value.*f.member); });
    }
};

template <>
struct Codec<bool> {
    static std::string name() { return "bool"; }
    static bool decode(const json& j) {
        if (!j.is_boolean()) detail::expected("a boolean", j);
        return j.get<bool>();
    }
    static json encode(bool b) { return json(b); }
};

template <class T>
struct Codec<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
    static std::string name() { return detail::integer_name<T>(); }
    static T decode(const json& j) { return detail::decode_integer<T>(j); }
    static json encode(T v) {
        if constexpr (std::is_signed_v<T>) return json(static_cast<std::int64_t>(v));
        else return json(static_cast<std::uint64_t>(v));
    }
};

template <class T>
struct Codec<T, std::enable_if_t<std::is_floating_point_v<T>>> {
    static std::string name() { return detail::floating_name<T>(); }
    static T decode(const json& j) { return detail::decode_floating<T>(j); }
    static json encode(T v) { return detail::encode_floating<T>(v); }
};

template <>
struct Codec<std::string> {
    static std::string name() { return "string"; }
    static std::string decode(const json& j) {
        if (!j.is_string()) detail::expected("a string", j);
        return j.get<std::string>();
    }
    static json encode(const std::string& s) { return json(s); }
};

// Return-only string types: a decoded argument could not own its text.
template <>
struct Codec<const char*> {
    static std::string name() { return "string"; }
    static json encode(const char* s) {
        if (s == nullptr) return json(nullptr);
        return json(std::string(s));
    }
};
template <>
struct Codec<char*> : Codec<const char*> {};
template <>
struct Codec<std::string_view> {
    static std::string name() { return "string"; }
    static json encode(std::string_view s) { return json(std::string(s)); }
};

template <>
struct Codec<std::nullptr_t> {
    static std::string name() { return "null"; }
    static std::nullptr_t decode(const json& j) {
        if (!j.is_null()) detail::expected("null", j);
        return nullptr;
    }
    static json encode(std::nullptr_t) { return json(nullptr); }
};

template <>
struct Codec<Bytes> {
    static std::string name() { return "bytes"; }
    static Bytes decode(const json& j) {
        if (!j.is_string()) detail::expected("a base64 string (bytes)", j);
        return Bytes(detail::base64_decode(j.get_ref<const std::string&>()));
    }
    static json encode(const Bytes& b) { return json(detail::base64_encode(b.data)); }
};

template <>
struct Codec<json> {
    static std::string name() { return "json"; }
    static json decode(const json& j) { return j; }
    static json encode(const json& j) { return j; }
};

template <>
struct Codec<nlohmann::json> {
    static std::string name() { return "json"; }
    static nlohmann::json decode(const json& j) { return nlohmann::json::parse(j.dump()); }
    static json encode(const nlohmann::json& j) { return json::parse(j.dump()); }
};

template <class T, class A>
struct Codec<std::vector<T, A>> {
    static std::string name() { return "vector<" + Codec<T>::name() + ">"; }
    static std::vector<T, A> decode(const json& j) {
        if (!j.is_array()) detail::expected("an array (" + name() + ")", j);
        const auto& items = j.get_ref<const json::array_t&>();
        std::vector<T, A> out;
        out.reserve(items.size());
        for (std::size_t i = 0; i < items.size(); ++i)
            out.push_back(detail::with_index(i, [&] { return Codec<T>::decode(items[i]); }));
        return out;
    }
    static json encode(const std::vector<T, A>& v) {
        json out = json::array();
        auto& items = out.get_ref<json::array_t&>();
        items.reserve(v.size());
        std::size_t i = 0;
        for (auto&& e : v) {
            items.push_back(detail::with_index(i, [&] { return Codec<T>::encode(static_cast<const T&>(e)); }));
            ++i;
        }
        return out;
    }
};

template <class T, std::size_t N>
struct Codec<std::array<T, N>> {
    static std::string name() { return "array<" + Codec<T>::name() + ", " + std::to_string(N) + ">"; }
    static std::array<T, N> decode(const json& j) {
        if (!j.is_array() || j.size() != N) detail::expected("an array of " + std::to_string(N) + " (" + name() + ")", j);
        std::array<T, N> out{};
        for (std::size_t i = 0; i < N; ++i)
            out[i] = detail::with_index(i, [&] { return Codec<T>::decode(j[i]); });
        return out;
    }
    static json encode(const std::array<T, N>& v) {
        json out = json::array();
        for (std::size_t i = 0; i < N; ++i)
            out.push_back(detail::with_index(i, [&] { return Codec<T>::encode(v[i]); }));
        return out;
    }
};

namespace detail {

template <class... T>
std::string join_names() {
    std::string out;
    ((out += (out.empty() ? "" : ", ") + Codec<T>::name()), ...);
    return out;
}

template <class Tuple, class... T, std::size_t... I>
Tuple decode_tuple(const json& j, std::index_sequence<I...>) {
    // Braced initialization evaluates left to right: the first bad element is reported.
    return Tuple{with_index(I, [&] { return Codec<T>::decode(j[I]); })...};
}

template <class Tuple, class... T, std::size_t... I>
json encode_tuple(const Tuple& t, std::index_sequence<I...>) {
    json out = json::array();
    (out.push_back(with_index(I, [&] { return Codec<T>::encode(std::get<I>(t)); })), ...);
    return out;
}

}  // namespace detail

// SequenceCodec serves the other standard containers a list may be:
// std::deque, std::list, std::set, std::multiset, std::unordered_set (a
// list on the wire, in the container's order; a set's duplicates go).
template <class C>
struct SequenceCodec {
    using T = typename C::value_type;
    static C decode(const json& j, const std::string& name) {
        if (!j.is_array()) detail::expected("an array (" + name + ")", j);
        C out;
        for (std::size_t i = 0; i < j.size(); ++i)
            out.insert(out.end(), detail::with_index(i, [&] { return Codec<T>::decode(j[i]); }));
        return out;
    }
    static json encode(const C& v) {
        json out = json::array();
        std::size_t i = 0;
        for (const auto& e : v) {
            out.push_back(detail::with_index(i, [&] { return Codec<T>::encode(e); }));
            ++i;
        }
        return out;
    }
};

template <class T, class A>
struct Codec<std::deque<T, A>> : SequenceCodec<std::deque<T, A>> {
    static std::string name() { return "deque<" + Codec<T>::name() + ">"; }
    static std::deque<T, A> decode(const json& j) { return SequenceCodec<std::deque<T, A>>::decode(j, name()); }
};
template <class T, class A>
struct Codec<std::list<T, A>> : SequenceCodec<std::list<T, A>> {
    static std::string name() { return "list<" + Codec<T>::name() + ">"; }
    static std::list<T, A> decode(const json& j) { return SequenceCodec<std::list<T, A>>::decode(j, name()); }
};
template <class T, class C, class A>
struct Codec<std::set<T, C, A>> : SequenceCodec<std::set<T, C, A>> {
    static std::string name() { return "set<" + Codec<T>::name() + ">"; }
    static std::set<T, C, A> decode(const json& j) { return SequenceCodec<std::set<T, C, A>>::decode(j, name()); }
};
template <class T, class C, class A>
struct Codec<std::multiset<T, C, A>> : SequenceCodec<std::multiset<T, C, A>> {
    static std::string name() { return "multiset<" + Codec<T>::name() + ">"; }
    static std::multiset<T, C, A> decode(const json& j) { return SequenceCodec<std::multiset<T, C, A>>::decode(j, name()); }
};
template <class T, class H, class E, class A>
struct Codec<std::unordered_set<T, H, E, A>> : SequenceCodec<std::unordered_set<T, H, E, A>> {
    static std::string name() { return "unordered_set<" + Codec<T>::name() + ">"; }
    static std::unordered_set<T, H, E, A> decode(const json& j) {
        return SequenceCodec<std::unordered_set<T, H, E, A>>::decode(j, name());
    }
};

template <class... T>
struct Codec<std::tuple<T...>> {
    static std::string name() { return "tuple<" + detail::join_names<T...>() + ">"; }
    static std::tuple<T...> decode(const json& j) {
        if (!j.is_array() || j.size() != sizeof...(T))
            detail::expected("an array of " + std::to_string(sizeof...(T)) + " (" + name() + ")", j);
        return detail::decode_tuple<std::tuple<T...>, T...>(j, std::index_sequence_for<T...>{});
    }
    static json encode(const std::tuple<T...>& t) {
        return detail::encode_tuple<std::tuple<T...>, T...>(t, std::index_sequence_for<T...>{});
    }
};

template <class A, class B>
struct Codec<std::pair<A, B>> {
    static std::string name() { return "pair<" + detail::join_names<A, B>() + ">"; }
    static std::pair<A, B> decode(const json& j) {
        if (!j.is_array() || j.size() != 2) detail::expected("an array of 2 (" + name() + ")", j);
        return detail::decode_tuple<std::pair<A, B>, A, B>(j, std::index_sequence_for<A, B>{});
    }
    static json encode(const std::pair<A, B>& p) {
        return detail::encode_tuple<std::pair<A, B>, A, B>(p, std::index_sequence_for<A, B>{});
    }
};

template <class T>
struct Codec<std::optional<T>> {
    static std::string name() { return "optional<" + Codec<T>::name() + ">"; }
    static std::optional<T> decode(const json& j) {
        if (j.is_null()) return std::nullopt;
        return Codec<T>::decode(j);
    }
    static json encode(const std::optional<T>& v) {
        if (!v) return json(nullptr);
        return Codec<T>::encode(*v);
    }
};

namespace detail {

// MapCodec serves std::map and std::unordered_map. String keys make a JSON
// object (nexus sends Map Str X that way); other keys an array of
// [key, value] pairs. A string-keyed map also accepts the pairs.
template <class Map, class K, class V>
struct MapCodec {
    static constexpr bool string_keys = std::is_same_v<K, std::string>;

    static std::string name() { return "map<" + join_names<K, V>() + ">"; }

    static Map decode(const json& j) {
        Map out;
        if constexpr (string_keys) {
            if (j.is_object()) {
                for (auto it = j.begin(); it != j.end(); ++it) {
                    const std::string& key = it.key();
                    out.insert_or_assign(key, with_key(key, [&] { return Codec<V>::decode(it.value()); }));
                }
                return out;
            }
        }
        if (!j.is_array()) expected(string_keys ? "an object (" + name() + ")" : "an array of [key, value] (" + name() + ")", j);
        for (std::size_t i = 0; i < j.size(); ++i) {
            with_index(i, [&] {
                const json& pair = j[i];
                if (!pair.is_array() || pair.size() != 2) expected("a [key, value] array", pair);
                K key = with_index(0, [&] { return Codec<K>::decode(pair[0]); });
                V value = with_index(1, [&] { return Codec<V>::decode(pair[1]); });
                out.insert_or_assign(std::move(key), std::move(value));
                return 0;
            });
        }
        return out;
    }

    static json encode(const Map& m) {
        if constexpr (string_keys) {
            json out = json::object();
            for (const auto& [key, value] : m)
                out[key] = with_key(key, [&] { return Codec<V>::encode(value); });
            return out;
        } else {
            json out = json::array();
            std::size_t i = 0;
            for (const auto& [key, value] : m) {
                out.push_back(with_index(i, [&] { return json::array({Codec<K>::encode(key), Codec<V>::encode(value)}); }));
                ++i;
            }
            return out;
        }
    }
};

// whole_value runs the conversion of a whole value, whose PathError
// becomes a ConversionError naming the path ("value at [2]: ...").
template <class F>
auto whole_value(F convert) -> decltype(convert()) {
    try {
        return convert();
    } catch (const PathError& e) {
        throw ConversionError(where("value", e));
    }
}

}  // namespace detail

template <class K, class V, class C, class A>
struct Codec<std::map<K, V, C, A>> : detail::MapCodec<std::map<K, V, C, A>, K, V> {};

template <class K, class V, class H, class E, class A>
struct Codec<std::unordered_map<K, V, H, E, A>> : detail::MapCodec<std::unordered_map<K, V, H, E, A>, K, V> {};

// decode converts JSON to T, throwing ConversionError ("value at [2]: ...").
template <class T>
T decode(const json& j) {
    return detail::whole_value([&] { return Codec<detail::plain<T>>::decode(j); });
}

// encode converts a value to JSON, throwing ConversionError for what JSON
// cannot hold (NaN, infinities).
template <class T>
json encode(const T& value) {
    return detail::whole_value([&] { return Codec<detail::plain<T>>::encode(value); });
}

// --- content results ------------------------------------------------------------

// Content is a function's reply as MCP content blocks (docs/internals.md,
// "Content blocks"), optionally with a typed value as well:
//
//     nexus::Content plot(std::vector<double> xs) {
//         return nexus::Content({nexus::image(render_png(xs), "image/png"), nexus::text("a plot")});
//     }
struct Content {
    std::vector<json> blocks;
    json value = nullptr;

    // Braces take the initializer_list forms: Content({text("hi")}).
    Content(std::initializer_list<json> blocks_) : blocks(blocks_) { check(); }
    explicit Content(std::vector<json> blocks_) : blocks(std::move(blocks_)) { check(); }
    template <class T>
    Content(std::initializer_list<json> blocks_, const T& value_) : blocks(blocks_), value(encode(value_)) {
        check();
    }
    template <class T>
    Content(std::vector<json> blocks_, const T& value_) : blocks(std::move(blocks_)), value(encode(value_)) {
        check();
    }

private:
    void check() const {
        for (std::size_t i = 0; i < blocks.size(); ++i)
            if (!blocks[i].is_object() || !blocks[i].contains("type") || !blocks[i]["type"].is_string())
                throw std::invalid_argument("nexus::Content: block " + std::to_string(i) +
                                            " is not a content block (use nexus::text, image, audio or resource)");
    }
};

// text is a text content block.
inline json text(const std::string& s) { return json{{"type", "text"}, {"text", s}}; }

// image is an image content block from the image's bytes ("image/png", ...).
inline json image(const std::string& data, const std::string& mime_type) {
    return json{{"type", "image"}, {"data", detail::base64_encode(data)}, {"mimeType", mime_type}};
}
inline json image(const Bytes& data, const std::string& mime_type) { return image(data.data, mime_type); }

// audio is an audio content block from the sound's bytes ("audio/wav", ...).
inline json audio(const std::string& data, const std::string& mime_type) {
    return json{{"type", "audio"}, {"data", detail::base64_encode(data)}, {"mimeType", mime_type}};
}
inline json audio(const Bytes& data, const std::string& mime_type) { return audio(data.data, mime_type); }

// resource is an embedded resource block: a string as its text, Bytes as a
// base64 blob.
inline json resource(const std::string& text, const std::string& mime_type, const std::string& uri) {
    return json{{"type", "resource"}, {"resource", {{"uri", uri}, {"mimeType", mime_type}, {"text", text}}}};
}
inline json resource(const Bytes& data, const std::string& mime_type, const std::string& uri) {
    return json{{"type", "resource"}, {"resource", {{"uri", uri}, {"mimeType", mime_type}, {"blob", detail::base64_encode(data.data)}}}};
}

// --- arrays (protocol 2) ------------------------------------------------------------

namespace detail {

// The largest frame body either side may send.
constexpr std::size_t max_frame = std::size_t(1) << 30;

// The array dtypes of protocol 2, little-endian on the wire.
enum class DType { i4, i8, f8 };

inline const char* dtype_name(DType d) { return d == DType::i4 ? "i4" : d == DType::i8 ? "i8" : "f8"; }
inline std::size_t dtype_size(DType d) { return d == DType::i4 ? 4 : 8; }

// Arrays are taken only where the host's byte order is the wire's, so that
// their bytes are copied as they are.
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
inline constexpr bool takes_arrays = true;
#else
inline constexpr bool takes_arrays = false;
#endif

// A result of fewer elements goes as JSON: for small arrays that is cheaper.
constexpr std::size_t min_array_result = 256;

struct FreeDeleter {
    void operator()(void* p) const noexcept { std::free(p); }
};

// Buffer holds bytes read from nexus. It grows as they arrive, so a header
// claiming a large body costs nothing until the body comes; realloc grows
// a large block by remapping it rather than copying.
struct Buffer {
    std::unique_ptr<char, FreeDeleter> data;
    std::size_t size = 0;
    std::size_t capacity = 0;

    void reserve(std::size_t want) {
        if (want <= capacity) return;
        void* p = std::realloc(data.get(), want);
        if (p == nullptr) throw std::bad_alloc();
        (void)data.release();
        data.reset(static_cast<char*>(p));
        capacity = want;
    }
};

// InArray is an array of a call: its place in the arguments and its bytes.
struct InArray {
    std::size_t arg = 0;  // path[0]
    json path;            // the whole path, as nexus sent it
    DType dtype = DType::i8;
    std::vector<std::size_t> shape;
    Buffer blob;
    bool placed = false;  // turned into JSON inside the arguments
};

inline std::int64_t load_int(const char* p, DType d, std::size_t i) {
    if (d == DType::i4) {
        std::int32_t v;
        std::memcpy(&v, p + 4 * i, 4);
        return v;
    }
    std::int64_t v;
    std::memcpy(&v, p + 8 * i, 8);
    return v;
}

inline double load_double(const char* p, std::size_t i) {
    double v;
    std::memcpy(&v, p + 8 * i, 8);
    return v;
}

// element_json is element i as the JSON parser makes it from the text
// nexus would have sent: a non-negative integer is unsigned, as nlohmann
// reads it, so a function sees the same json either way.
inline json element_json(const InArray& a, std::size_t i) {
    const char* p = a.blob.data.get();
    if (a.dtype == DType::f8) return json(load_double(p, i));
    std::int64_t v = load_int(p, a.dtype, i);
    if (v >= 0) return json(static_cast<std::uint64_t>(v));
    return json(v);
}

// array_json is the nested lists an array stands for: the route for arrays
// inside a record and for parameter types without a fast path.
inline json array_json(const InArray& a, std::size_t level, std::size_t& next) {
    json out = json::array();
    auto& items = out.get_ref<json::array_t&>();
    items.reserve(a.shape[level]);
    for (std::size_t i = 0; i < a.shape[level]; ++i) {
        if (level + 1 == a.shape.size()) items.push_back(element_json(a, next++));
        else items.push_back(array_json(a, level + 1, next));
    }
    return out;
}

// array_traits<T>::rank is how many std::vectors deep T nests around an
// arithmetic element other than bool: such parameters are filled straight
// from a blob, and such results may go as one. 0 for every other type.
template <class T, class = void>
struct array_traits {
    static constexpr std::size_t rank = 0;
};
template <class E, class A>
struct array_traits<std::vector<E, A>, std::enable_if_t<std::is_arithmetic_v<E> && !std::is_same_v<E, bool>>> {
    static constexpr std::size_t rank = 1;
    using element = E;
};
template <class U, class A>
struct array_traits<std::vector<U, A>, std::enable_if_t<(array_traits<U>::rank > 0)>> {
    static constexpr std::size_t rank = array_traits<U>::rank + 1;
    using element = typename array_traits<U>::element;
};

template <class E>
bool fits(std::int64_t v) {
    using limits = std::numeric_limits<E>;
    if constexpr (std::is_signed_v<E>) {
        return v >= static_cast<std::int64_t>(limits::min()) && v <= static_cast<std::int64_t>(limits::max());
    } else {
        return v >= 0 && static_cast<std::uint64_t>(v) <= static_cast<std::uint64_t>(limits::max());
    }
}

// decode_element converts element i as the JSON route would, errors and all.
template <class E>
E decode_element(const InArray& a, std::size_t i, std::size_t index) {
    return with_index(index, [&] { return Codec<E>::decode(element_json(a, i)); });
}

// fill_elements converts n elements from element first of the blob: a copy
// of the bytes when the types agree, else each element with the checks
// and messages of the JSON route.
template <class E>
void fill_elements(E* out, const InArray& a, std::size_t first, std::size_t n) {
    const char* p = a.blob.data.get();
    constexpr bool whole = std::is_integral_v<E>;
    if (a.dtype == DType::f8) {
        if constexpr (std::is_same_v<E, double>) {
            if (n > 0) std::memcpy(out, p + 8 * first, 8 * n);
        } else {
            for (std::size_t i = 0; i < n; ++i) out[i] = decode_element<E>(a, first + i, i);
        }
        return;
    }
    if constexpr (whole && std::is_signed_v<E>) {
        if (sizeof(E) == dtype_size(a.dtype)) {
            if (n > 0) std::memcpy(out, p + sizeof(E) * first, sizeof(E) * n);
            return;
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        std::int64_t v = load_int(p, a.dtype, first + i);
        if constexpr (whole) {
            out[i] = fits<E>(v) ? static_cast<E>(v) : decode_element<E>(a, first + i, i);
        } else {
            out[i] = static_cast<E>(static_cast<double>(v));  // as the JSON route: the double, then E
        }
    }
}

// from_array builds T (array_traits<T>::rank == a.shape.size()) from the
// array's elements, next counting the elements used.
template <class T>
T from_array(const InArray& a, std::size_t level, std::size_t& next) {
    using U = typename T::value_type;
    std::size_t n = a.shape[level];
    T out;
    if constexpr (array_traits<U>::rank == 0) {
        out.resize(n);
        fill_elements(out.data(), a, next, n);
        next += n;
    } else {
        out.reserve(n);
        for (std::size_t i = 0; i < n; ++i) out.push_back(with_index(i, [&] { return from_array<U>(a, level + 1, next); }));
    }
    return out;
}

// OutArray is a result sent as one array.
struct OutArray {
    DType dtype = DType::f8;
    std::vector<std::size_t> shape;
    std::shared_ptr<const void> owner;  // keeps data alive
    const char* data = nullptr;
    std::size_t size = 0;
    // pieces, when not empty, are the bytes instead of data: the rows of a
    // nest of vectors, sent from their own memory rather than copied into
    // one fresh block first: fresh pages are a large call's cost.
    std::vector<std::pair<const char*, std::size_t>> pieces;
};

// A nest of vectors goes out row by row when its rows average this many
// bytes; shorter rows are cheaper copied than written a piece each.
constexpr std::size_t min_row_piece = 4096;

template <class T>
void first_shape(const T& v, std::size_t* shape) {
    shape[0] = v.size();
    if constexpr (array_traits<typename T::value_type>::rank > 0) {
        if (!v.empty()) first_shape(v.front(), shape + 1);
    }
}

template <class T>
bool rectangular(const T& v, const std::size_t* shape) {
    if (v.size() != shape[0]) return false;
    if constexpr (array_traits<typename T::value_type>::rank > 0) {
        for (const auto& row : v)
            if (!rectangular(row, shape + 1)) return false;
    }
    return true;
}

// each_row calls f(data, n) for each innermost vector, in row-major order.
template <class T, class F>
bool each_row(const T& v, F& f) {
    if constexpr (array_traits<typename T::value_type>::rank == 0) {
        return f(v.data(), v.size());
    } else {
        for (const auto& row : v)
            if (!each_row(row, f)) return false;
        return true;
    }
}

// wire_double is the double a floating element goes out as: the one its
// JSON text would read back as.
template <class E>
double wire_double(E x) {
    if constexpr (std::is_same_v<E, float>) return shortest_float(x);
    else return static_cast<double>(x);
}

// to_array makes value (array_traits<T>::rank > 0) one array, or nothing
// when JSON must carry it: a ragged nest, fewer than min_array_result
// elements, or elements an array cannot hold exactly (NaN and infinities,
// which take the JSON route and its error; unsigned integers past 2^63).
// It moves from value only when it succeeds and movable is true.
template <class V>
std::unique_ptr<OutArray> to_array(V& value, bool movable) {
    using T = plain<V>;
    using E = typename array_traits<T>::element;
    constexpr std::size_t rank = array_traits<T>::rank;
    std::vector<std::size_t> shape(rank, 0);
    first_shape(value, shape.data());
    if (!rectangular(value, shape.data())) return nullptr;
    std::size_t count = 1;
    for (std::size_t d : shape) count *= d;
    if (count < min_array_result || count > max_frame / 8) return nullptr;

    // (Held by pointer: GCC 12 warns falsely about an optional of it.)
    auto out = std::make_unique<OutArray>();
    out->dtype = std::is_integral_v<E> ? DType::i8 : DType::f8;
    out->shape = std::move(shape);
    out->size = count * 8;
    auto ok = [](const E* p, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) {
            if constexpr (std::is_floating_point_v<E>) {
                if (!std::isfinite(wire_double(p[i]))) return false;
            } else if constexpr (std::is_unsigned_v<E> && sizeof(E) >= 8) {
                if (p[i] > static_cast<E>(std::numeric_limits<std::int64_t>::max())) return false;
            }
        }
        return true;
    };
    if constexpr (std::is_floating_point_v<E> || (std::is_unsigned_v<E> && sizeof(E) >= 8)) {
        if (!each_row(value, ok)) return nullptr;
    }
    constexpr bool as_is = std::is_same_v<E, double> || (std::is_integral_v<E> && std::is_signed_v<E> && sizeof(E) == 8);
    if constexpr (rank == 1 && as_is && !std::is_const_v<V>) {
        if (movable) {  // the vector's own bytes go out
            auto held = std::make_shared<T>(std::move(value));
            out->data = reinterpret_cast<const char*>(held->data());
            out->owner = std::move(held);
            return out;
        }
    }
    if constexpr (rank > 1 && as_is && !std::is_const_v<V>) {
        std::size_t rows = count / out->shape.back();
        if (movable && out->size / rows >= min_row_piece) {  // each row's own bytes go out
            auto held = std::make_shared<T>(std::move(value));
            out->pieces.reserve(rows);
            auto piece = [&out](const E* p, std::size_t n) {
                out->pieces.emplace_back(reinterpret_cast<const char*>(p), 8 * n);
                return true;
            };
            each_row(*held, piece);
            out->owner = std::move(held);
            return out;
        }
    }
    std::shared_ptr<char> bytes(static_cast<char*>(std::malloc(out->size)), FreeDeleter());
    if (!bytes) throw std::bad_alloc();
    char* at = bytes.get();
    auto copy = [&at](const E* p, std::size_t n) {
        if constexpr (as_is) {
            if (n > 0) std::memcpy(at, p, 8 * n);
            at += 8 * n;
        } else {
            for (std::size_t i = 0; i < n; ++i, at += 8) {
                if constexpr (std::is_integral_v<E>) {
                    auto v = static_cast<std::int64_t>(p[i]);
                    std::memcpy(at, &v, 8);
                } else {
                    double v = wire_double(p[i]);
                    std::memcpy(at, &v, 8);
                }
            }
        }
        return true;
    };
    each_row(value, copy);
    out->data = bytes.get();
    out->owner = std::move(bytes);
    return out;
}

// Sink takes the parse events of one argument in JSON and builds its
// value without a json tree (see MessageReader). A false return means the
// value is not the plain nest of numbers the sink takes: the message is
// then parsed again the ordinary way, which decides what is wrong.
struct Sink {
    virtual ~Sink() = default;
    virtual bool start_array() = 0;
    virtual bool end_array() = 0;
    virtual bool integer(std::int64_t v) = 0;
    virtual bool whole(std::uint64_t v) = 0;
    virtual bool real(double v) = 0;
    virtual bool done() const = 0;
    virtual std::shared_ptr<void> take() = 0;  // a T
};

using SinkMaker = std::unique_ptr<Sink> (*)();

// ArraySink builds T (array_traits<T>::rank > 0) with the conversions of
// Codec<T>::decode: the elements in one flat vector, each array's length,
// and the nest of vectors at the end.
template <class T>
class ArraySink final : public Sink {
    using E = typename array_traits<T>::element;
    static constexpr std::size_t rank = array_traits<T>::rank;

public:
    bool start_array() override {
        if (done_ || depth_ == rank) return false;
        if (depth_ > 0) ++open_[depth_ - 1];
        open_[depth_++] = 0;
        return true;
    }
    bool end_array() override {
        --depth_;
        lengths_[depth_].push_back(open_[depth_]);
        done_ = depth_ == 0;
        return true;
    }
    bool integer(std::int64_t v) override {
        if constexpr (std::is_integral_v<E>) return fits<E>(v) && put(static_cast<E>(v));
        else return real(static_cast<double>(v));
    }
    bool whole(std::uint64_t v) override {
        if constexpr (std::is_integral_v<E>) return v <= static_cast<std::uint64_t>(std::numeric_limits<E>::max()) && put(static_cast<E>(v));
        else return real(static_cast<double>(v));
    }
    bool real(double v) override {
        if constexpr (std::is_integral_v<E>) {
            return false;  // a whole double may still fit: the ordinary route decides
        } else {
            if (std::is_same_v<E, float> && std::isfinite(v) && std::fabs(v) > static_cast<double>(std::numeric_limits<float>::max()))
                return false;
            return put(static_cast<E>(v));
        }
    }
    bool done() const override { return done_; }
    std::shared_ptr<void> take() override {
        std::array<std::size_t, rank> next{};
        std::size_t at = 0;
        return std::make_shared<T>(build<T>(0, next, at));
    }

private:
    bool put(E x) {
        if (depth_ != rank) return false;
        flat_.push_back(x);
        ++open_[rank - 1];
        return true;
    }

    template <class V>
    V build(std::size_t level, std::array<std::size_t, rank>& next, std::size_t& at) {
        std::size_t n = lengths_[level][next[level]++];
        if constexpr (array_traits<typename V::value_type>::rank == 0) {
            if constexpr (std::is_same_v<V, std::vector<E>>) {
                if (rank == 1) return std::move(flat_);
            }
            V row(flat_.begin() + std::ptrdiff_t(at), flat_.begin() + std::ptrdiff_t(at + n));
            at += n;
            return row;
        } else {
            V out;
            out.reserve(n);
            for (std::size_t i = 0; i < n; ++i) out.push_back(build<typename V::value_type>(level + 1, next, at));
            return out;
        }
    }

    std::vector<E> flat_;
    std::array<std::vector<std::size_t>, rank> lengths_;  // per level, each array's length in order
    std::array<std::size_t, rank> open_{};  // elements so far of the open array at each level
    std::size_t depth_ = 0;
    bool done_ = false;
};

template <class T>
std::unique_ptr<Sink> make_sink() {
    return std::make_unique<ArraySink<T>>();
}

// sink_maker is how an argument of type T is read without a json tree, or
// nullptr when it is not.
template <class T>
constexpr SinkMaker sink_maker() {
    if constexpr (array_traits<T>::rank > 0) return &make_sink<T>;
    else return nullptr;
}

// put_number writes x at p (64 bytes of room) as the json that
// Codec<E>::encode(x) makes is written (nlohmann's own number formatting),
// or fails as that does, and returns the end.
template <class E>
char* put_number(char* p, E x, std::size_t index) {
    if constexpr (std::is_integral_v<E>) {
        if constexpr (std::is_signed_v<E>) return std::to_chars(p, p + 64, static_cast<std::int64_t>(x)).ptr;
        else return std::to_chars(p, p + 64, static_cast<std::uint64_t>(x)).ptr;
    } else {
        if (const char* name = nonfinite_name(static_cast<double>(x))) {
            (void)index;
            *p++ = '"';
            for (; *name; ++name) *p++ = *name;
            *p++ = '"';
            return p;
        }
        double d = wire_double(x);
        if (!std::isfinite(d)) return std::copy_n("null", 4, p);  // a long double past double's range, as nlohmann writes it
        return nlohmann::detail::to_chars(p, p + 64, d);
    }
}

// append_array_text writes value (array_traits<T>::rank > 0) as JSON text
// directly: the same text as dumping Codec<T>::encode(value), without
// building and freeing a json tree of every element.
template <class T>
void append_array_text(std::string& out, const T& value) {
    using U = typename T::value_type;
    out += '[';
    std::size_t i = 0;
    for (const auto& e : value) {
        if constexpr (array_traits<U>::rank > 0) {
            if (i > 0) out += ',';
            with_index(i, [&] { append_array_text(out, e); });
        } else {
            char buf[72];  // a comma and a number: one append each
            char* end = buf;
            if (i > 0) *end++ = ',';
            out.append(buf, put_number<U>(end, e, i));
        }
        ++i;
    }
    out += ']';
}

}  // namespace detail

// --- runtime state -------------------------------------------------------------

namespace detail {

constexpr std::size_t alt_stack_size = 64 << 10;

// A worker thread with no call for this long ends.
constexpr auto worker_idle_time = std::chrono::seconds(10);

// CallInput is what a call brings: its arguments, the arrays among them
// (their places in args hold null) and the rank of the result nexus would
// take as an array (0: none).
struct CallInput {
    json args;
    std::vector<InArray> arrays;
    std::vector<std::shared_ptr<void>> typed;  // arguments read without a json tree (null in args)
    std::size_t ret_rank = 0;
};

// Reply is what a function produced: its value (as json, or already as
// text) and, for a Content result, its blocks; or its value as one array.
struct Reply {
    json value;
    std::optional<json> content;
    std::unique_ptr<OutArray> array;
    std::optional<std::string> text;
};

using Handler = std::function<Reply(CallInput& input)>;

// Entry is a function in the dispatch table: its handler, and how each
// argument may be read straight from the message (nullptr: as json).
struct Entry {
    Handler handler;
    std::vector<SinkMaker> sinks;
};

// CallState is one call in flight.
struct CallState {
    json id;              // echoed exactly
    std::string id_text;  // its JSON text: the key of the call table
    long long mid = 0;
    bool progress = false;  // the client asked for progress
    std::atomic<bool> cancelled{false};
    std::mutex mu;  // with cv: wakes sleep_for and asks on cancel, asks on their answer
    std::condition_variable cv;
    const Handler* handler = nullptr;
    CallInput input;
    // Asks (elicit, sample, roots): the answers awaited, by ask number, under
    // mu. ended and asking order a call's end against a thread that asks.
    long long asked = 0;
    std::map<long long, std::optional<json>> asks;
    std::atomic<bool> asking{false};
    std::atomic<bool> ended{false};
};

// Worker is a thread that runs calls; idle, it waits for next.
struct Worker {
    std::condition_variable cv;
    std::shared_ptr<CallState> next;
};

struct Runtime {
    int in_fd = -1;
    int out_fd = -1;  // -1 until serve(): log() then writes to stderr
    std::string lang = "cpp";
    bool crash_handlers = false;  // ours are installed: call threads get an alternate signal stack
    std::mutex write_mu;
    std::mutex calls_mu;
    std::unordered_map<std::string, std::shared_ptr<CallState>> calls;
    std::map<long long, Entry> table;
    std::mutex workers_mu;
    std::vector<std::shared_ptr<Worker>> idle;  // the most recently idle last, and reused first
};

// runtime is never destroyed: detached call threads may use it while the
// process exits.
inline Runtime& runtime() {
    static Runtime* r = new Runtime;
    return *r;
}

inline thread_local CallState* current_call = nullptr;

// A pool's stdout is a pipe to nexus's stderr: make it line buffered, so
// that printf and std::cout lines show up as they are written.
inline const bool stdout_line_buffered = [] {
    if (std::getenv("NEXUS_POOL_IN") != nullptr) std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
    return true;
}();

[[noreturn]] inline void exit_now(int status) {
    std::cout.flush();
    std::fflush(nullptr);
    std::_Exit(status);
}

inline void put_header(unsigned char* h, std::uint32_t n) {
    h[0] = static_cast<unsigned char>(n >> 24);
    h[1] = static_cast<unsigned char>(n >> 16);
    h[2] = static_cast<unsigned char>(n >> 8);
    h[3] = static_cast<unsigned char>(n);
}

// send writes one message, made of parts, after a blob when blob is set:
// whole and in one writev, under the lock that keeps frames from several
// threads apart. SIGPIPE is blocked around the write so that a vanished
// nexus shows up as EPIPE; the pool then exits, as nexus is gone.
inline void send(std::initializer_list<std::string_view> parts, const OutArray* blob = nullptr) {
    Runtime& rt = runtime();
    if (rt.out_fd < 0) {
        for (std::string_view part : parts) std::fwrite(part.data(), 1, part.size(), stderr);
        std::fputc('\n', stderr);
        return;
    }
    unsigned char blob_header[4], header[4];
    iovec fixed[12];
    std::vector<iovec> many;  // a blob in pieces
    iovec* iov = fixed;
    if (blob != nullptr && !blob->pieces.empty()) {
        many.resize(blob->pieces.size() + 2 + parts.size());
        iov = many.data();
    }
    int count = 0;
    auto add = [&](const void* p, std::size_t n) {
        if (n > 0) iov[count++] = iovec{const_cast<void*>(p), n};
    };
    if (blob != nullptr) {
        put_header(blob_header, static_cast<std::uint32_t>(blob->size) | 0x80000000u);
        add(blob_header, 4);
        if (blob->pieces.empty()) add(blob->data, blob->size);
        for (const auto& [p, n] : blob->pieces) add(p, n);
    }
    std::size_t n = 0;
    for (std::string_view part : parts) n += part.size();
    put_header(header, static_cast<std::uint32_t>(n));
    add(header, 4);
    for (std::string_view part : parts) add(part.data(), part.size());

    std::lock_guard<std::mutex> lock(rt.write_mu);
    sigset_t pipe_only, old;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    iovec* at = iov;
    while (count > 0) {
        ssize_t w = ::writev(rt.out_fd, at, std::min(count, 1024));  // IOV_MAX
        if (w < 0) {
            if (errno == EINTR) continue;
            exit_now(0);  // nexus is gone: so are we
        }
        auto done = static_cast<std::size_t>(w);
        while (count > 0 && done >= at->iov_len) {
            done -= at->iov_len;
            ++at;
            --count;
        }
        if (count > 0) {
            at->iov_base = static_cast<char*>(at->iov_base) + done;
            at->iov_len -= done;
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

inline void write_frame(const std::string& payload) { send({payload}); }

inline json number(double x) {
    if (std::trunc(x) == x && std::fabs(x) < 9007199254740992.0) return json(static_cast<std::int64_t>(x));
    return json(x);
}

[[noreturn]] inline void protocol_error(const std::string& what) {
    std::fprintf(stderr, "nexus pool %s: protocol error: %s\n", runtime().lang.c_str(), what.c_str());
    exit_now(2);
}

// --- crashes -------------------------------------------------------------------

// A crash kills the pool and nexus reports it with the pool's last lines of
// output; this handler makes the last line say which call crashed. It uses
// only async-signal-safe calls, then dies of the same signal.
inline void write_all_raw(const char* s, std::size_t n) {
    while (n > 0) {
        ssize_t w = ::write(2, s, n);
        if (w <= 0) {
            if (w < 0 && errno == EINTR) continue;
            return;
        }
        s += w;
        n -= std::size_t(w);
    }
}
inline void write_raw(const char* s) { write_all_raw(s, std::strlen(s)); }

inline void write_raw_number(long long v) {
    char buf[24];
    int i = sizeof buf;
    bool negative = v < 0;
    unsigned long long u = negative ? 0ULL - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
    do {
        buf[--i] = char('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (negative) buf[--i] = '-';
    write_all_raw(buf + i, sizeof buf - std::size_t(i));
}

inline const char* signal_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV (segmentation fault)";
    case SIGBUS: return "SIGBUS (bus error)";
    case SIGFPE: return "SIGFPE (arithmetic exception)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGABRT: return "SIGABRT (aborted)";
    default: return "a signal";
    }
}

inline void crash_handler(int sig) {
    write_raw("nexus pool ");
    write_raw(runtime().lang.c_str());
    const CallState* call = current_call;
    if (call != nullptr) {
        write_raw(": call ");
        write_raw(call->id_text.c_str());
        write_raw(" (mid ");
        write_raw_number(call->mid);
        write_raw(")");
    }
    write_raw(" crashed: ");
    write_raw(signal_name(sig));
    write_raw("\n");
    // SA_RESETHAND restored the default action: die of the same signal once
    // this handler returns (a fault also recurs when the instruction reruns).
    ::raise(sig);
}

inline void install_crash_handlers() {
    bool any = false;
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
        struct sigaction old {};
        if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO)) continue;  // the program's own handler wins
        struct sigaction sa {};
        sa.sa_handler = crash_handler;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND | SA_ONSTACK;
        if (sigaction(sig, &sa, nullptr) == 0) any = true;
    }
    runtime().crash_handlers = any;
}

// AltStack gives a call thread its own signal stack, so that the crash
// handler still runs when the call overflows its stack.
class AltStack {
public:
    AltStack() {
        if (!runtime().crash_handlers) return;
        memory_ = std::malloc(alt_stack_size);
        if (memory_ == nullptr) return;
        stack_t ss{};
        ss.ss_sp = memory_;
        ss.ss_size = alt_stack_size;
        if (sigaltstack(&ss, nullptr) != 0) {
            std::free(memory_);
            memory_ = nullptr;
        }
    }
    ~AltStack() {
        if (memory_ == nullptr) return;
        stack_t ss{};
        ss.ss_flags = SS_DISABLE;
        sigaltstack(&ss, nullptr);
        std::free(memory_);
    }
    AltStack(const AltStack&) = delete;
    AltStack& operator=(const AltStack&) = delete;

private:
    void* memory_ = nullptr;
};


// --- calls ------------------------------------------------------------------------

inline std::string error_payload(const json& id, const std::string& message, const std::string& traceback = std::string()) {
    json frame = {{"type", "error"}, {"id", id}, {"message", message}};
    if (!traceback.empty()) frame["traceback"] = traceback;
    return frame.dump(-1, ' ', false, json::error_handler_t::replace);
}

inline std::string cancelled_payload(const json& id) {
    return json{{"type", "error"}, {"id", id}, {"message", "cancelled"}, {"cancelled", true}}.dump();
}

// strip_nlohmann drops "[json.exception.type_error.316] " from a message.
inline std::string strip_nlohmann(const char* what) {
    std::string s(what);
    if (s.rfind("[json.exception.", 0) == 0) {
        auto end = s.find("] ");
        if (end != std::string::npos) s.erase(0, end + 2);
    }
    return s;
}

// id_text is an id's JSON text, as dump() writes it.
inline std::string id_text(const json& id) {
    if (id.is_number_unsigned()) return std::to_string(id.get<std::uint64_t>());
    if (id.is_number_integer()) return std::to_string(id.get<std::int64_t>());
    return id.dump();
}

// Outgoing is a call's reply, ready to send: the message's parts, and the
// array that goes before it as a blob, if any.
struct Outgoing {
    std::string head;
    std::string value;  // a result's value: apart, so that a large one is not copied
    std::string tail;
    std::unique_ptr<OutArray> array;

    void send_it() const { send({head, value, tail}, array.get()); }
    std::size_t size() const { return head.size() + value.size() + tail.size() + (array ? array->size : 0); }
};

inline Outgoing message_only(std::string text) {
    Outgoing out;
    out.head = std::move(text);
    return out;
}

// reply runs the call's function and encodes its one reply.
inline Outgoing reply(CallState& call) {
    Reply r;
    try {
        if (call.cancelled) return message_only(cancelled_payload(call.id));
        r = (*call.handler)(call.input);
    } catch (const Cancelled&) {
        return message_only(cancelled_payload(call.id));
    } catch (const ConversionError& e) {
        return message_only(error_payload(call.id, e.what()));
    } catch (const std::exception& e) {
        std::string type = demangle(typeid(e).name());
        std::string text = e.what();
        return message_only(error_payload(call.id, text.empty() ? type : text, "C++ exception of type " + type));
    } catch (...) {
        return message_only(error_payload(call.id, "unknown C++ exception"));
    }
    // A call that saw the flag and returned early did not finish its work.
    if (call.cancelled) return message_only(cancelled_payload(call.id));
    Outgoing out;
    if (r.array) {
        out.head = "{\"type\":\"result\",\"id\":" + call.id_text + ",\"value\":null,\"arrays\":[{\"path\":[],\"dtype\":\"" +
                   dtype_name(r.array->dtype) + "\",\"shape\":[";
        for (std::size_t i = 0; i < r.array->shape.size(); ++i) {
            if (i > 0) out.head += ',';
            out.head += std::to_string(r.array->shape[i]);
        }
        out.head += "]}]}";
        out.array = std::move(r.array);
        return out;
    }
    // The message is written as nlohmann would write the whole object, in
    // parts: the value's text is not copied into a larger string.
    try {
        out.value = r.text ? std::move(*r.text) : r.value.dump();
        if (r.content) out.tail = ",\"content\":" + r.content->dump();
    } catch (const json::exception& e) {
        return message_only(error_payload(call.id, "result: a string is not valid UTF-8 (" + strip_nlohmann(e.what()) + ")"));
    }
    out.head = "{\"type\":\"result\",\"id\":" + call.id_text + ",\"value\":";
    out.tail += '}';
    std::size_t size = out.head.size() + out.value.size() + out.tail.size();
    if (size > max_frame)
        return message_only(error_payload(call.id, "the result takes " + std::to_string(size) + " bytes, over the " +
                                                       std::to_string(max_frame >> 20) + " MiB frame limit"));
    return out;
}

// run_call runs one call on this thread and forgets it; the reply is the
// caller's to send.
inline Outgoing run_call(CallState& call) {
    current_call = &call;
    Outgoing out = reply(call);
    current_call = nullptr;
    call.ended = true;
    if (call.asking) {
        // Threads of the call still waiting for an answer: none will come.
        std::lock_guard<std::mutex> lock(call.mu);
        call.cv.notify_all();
    }
    Runtime& rt = runtime();
    std::lock_guard<std::mutex> lock(rt.calls_mu);
    rt.calls.erase(call.id_text);
    return out;
}

// worker runs calls, starting with first, and waits for more; it ends after
// worker_idle_time without one. Threads are reused because starting one
// costs more than a small call; a new one starts whenever a call finds no
// idle worker, so calls never wait for each other.
inline void worker(std::shared_ptr<CallState> first) {
    AltStack alt_stack;
    auto self = std::make_shared<Worker>();
    Runtime& rt = runtime();
    std::shared_ptr<CallState> call = std::move(first);
    auto go_idle = [&] {
        std::lock_guard<std::mutex> lock(rt.workers_mu);
        rt.idle.push_back(self);
    };
    for (;;) {
        {
            Outgoing out = run_call(*call);
            call.reset();
            // Idle before a small reply leaves, so that the next call of a
            // caller waiting for it finds this thread (it waits at most
            // for the write); after a large one, so that no call waits
            // behind a long write.
            bool small = out.size() < (64 << 10);
            if (small) go_idle();
            out.send_it();
            if (!small) go_idle();
        }
        std::unique_lock<std::mutex> lock(rt.workers_mu);
        if (!self->cv.wait_for(lock, worker_idle_time, [&] { return self->next != nullptr; })) {
            rt.idle.erase(std::find(rt.idle.begin(), rt.idle.end(), self));
            return;
        }
        call = std::move(self->next);
    }
}

// submit hands a call to an idle worker, or starts one.
inline void submit(const std::shared_ptr<CallState>& call) {
    Runtime& rt = runtime();
    std::shared_ptr<Worker> w;
    {
        std::lock_guard<std::mutex> lock(rt.workers_mu);
        if (!rt.idle.empty()) {
            w = std::move(rt.idle.back());
            rt.idle.pop_back();
            w->next = call;
        }
    }
    // Outside the lock, so that the worker does not wake into a held lock;
    // w keeps the worker's condition variable alive meanwhile.
    if (w) w->cv.notify_one();
    else std::thread(worker, call).detach();
}

inline std::string mid_list() {
    std::string out;
    for (const auto& entry : runtime().table) {
        if (!out.empty()) out += ", ";
        out += std::to_string(entry.first);
    }
    return out;
}

// place_of finds the null an array's path names inside args, or protocol
// error: nexus always sends a null placeholder there.
inline json& place_of(json& args, const InArray& a, const std::string& call) {
    auto bad = [&](const std::string& why) {
        protocol_error("call " + call + ": array at " + a.path.dump() + ": " + why);
    };
    json* at = &args[a.arg];
    for (std::size_t k = 1; k < a.path.size(); ++k) {
        const json& step = a.path[k];
        if (step.is_string()) {
            if (!at->is_object()) bad("no object at step " + std::to_string(k));
            auto it = at->find(step.get_ref<const std::string&>());
            if (it == at->end()) bad("no member " + step.dump());
            at = &*it;
        } else if (step.is_number_unsigned()) {
            if (!at->is_array() || step.get<std::uint64_t>() >= at->size()) bad("no element " + step.dump());
            at = &(*at)[step.get<std::size_t>()];
        } else {
            bad("path elements must be strings and non-negative integers");
        }
    }
    if (!at->is_null()) bad("its place in args is not null");
    return *at;
}

inline void start_call(json& message, std::vector<InArray> arrays, std::vector<std::shared_ptr<void>> typed) {
    Runtime& rt = runtime();
    auto id_it = message.find("id");
    if (id_it == message.end()) protocol_error("a call without an id");
    json id = *id_it;
    auto mid_it = message.find("mid");
    const Handler* handler = nullptr;
    long long mid = 0;
    if (mid_it != message.end() && mid_it->is_number_integer() &&
        !(mid_it->is_number_unsigned() && mid_it->get<std::uint64_t>() > std::uint64_t(std::numeric_limits<long long>::max()))) {
        mid = mid_it->get<long long>();
        auto it = rt.table.find(mid);
        if (it != rt.table.end()) handler = &it->second.handler;
    }
    if (handler == nullptr) {
        std::string shown = mid_it == message.end() ? "null" : mid_it->dump();
        write_frame(error_payload(id, "unknown mid " + shown + " (this pool has " + mid_list() + ")"));
        return;
    }
    auto args_it = message.find("args");
    if (args_it == message.end() || !args_it->is_array()) protocol_error("call " + id.dump() + ": args is not an array");

    auto call = std::make_shared<CallState>();
    call->id_text = id_text(id);
    call->id = std::move(id);
    call->mid = mid;
    call->handler = handler;
    auto progress_it = message.find("progress");
    call->progress = progress_it != message.end() && progress_it->is_boolean() && progress_it->get<bool>();
    CallInput& input = call->input;
    input.args = std::move(*args_it);
    for (std::size_t i = 0; i < arrays.size(); ++i) {
        InArray& a = arrays[i];
        if (a.path.empty() || !a.path[0].is_number_unsigned() || a.path[0].get<std::uint64_t>() >= input.args.size())
            protocol_error("call " + call->id_text + ": array at " + a.path.dump() + " names no argument");
        a.arg = a.path[0].get<std::size_t>();
        if (a.arg < typed.size() && typed[a.arg] != nullptr)
            protocol_error("call " + call->id_text + ": array at " + a.path.dump() + ": its place in args is not null");
        place_of(input.args, a, call->id_text);
        for (std::size_t k = 0; k < i; ++k)
            if (arrays[k].path == a.path) protocol_error("call " + call->id_text + ": two arrays at " + a.path.dump());
    }
    input.arrays = std::move(arrays);
    input.typed = std::move(typed);
    auto ret_it = message.find("ret");
    if (ret_it != message.end() && ret_it->is_object()) {
        auto rank = ret_it->find("rank");
        if (rank != ret_it->end() && rank->is_number_unsigned()) input.ret_rank = rank->get<std::size_t>();
    }
    {
        std::lock_guard<std::mutex> lock(rt.calls_mu);
        rt.calls[call->id_text] = call;
    }
    try {
        submit(call);
    } catch (const std::system_error& e) {
        {
            std::lock_guard<std::mutex> lock(rt.calls_mu);
            rt.calls.erase(call->id_text);
        }
        write_frame(error_payload(call->id, std::string("cannot start a thread for the call: ") + e.what()));
    }
}

// call_in_flight is the call a message from nexus names by its id, or
// nullptr when it has none or the call has finished already.
inline std::shared_ptr<CallState> call_in_flight(const json& message) {
    auto id_it = message.find("id");
    if (id_it == message.end()) return nullptr;
    Runtime& rt = runtime();
    std::lock_guard<std::mutex> lock(rt.calls_mu);
    auto it = rt.calls.find(id_text(*id_it));
    return it == rt.calls.end() ? nullptr : it->second;
}

inline void cancel_call(const json& message) {
    std::shared_ptr<CallState> call = call_in_flight(message);
    if (!call) return;
    {
        std::lock_guard<std::mutex> lock(call->mu);
        call->cancelled = true;
    }
    call->cv.notify_all();
}

// answer_ask hands nexus's answer to the thread of the call waiting for it.
inline void answer_ask(json& message) {
    auto ask_it = message.find("ask");
    if (ask_it == message.end() || !ask_it->is_number_integer()) return;
    std::shared_ptr<CallState> call = call_in_flight(message);
    if (!call) return;
    {
        std::lock_guard<std::mutex> lock(call->mu);
        auto it = call->asks.find(ask_it->get<long long>());
        if (it == call->asks.end() || it->second) return;
        it->second = std::move(message);
    }
    call->cv.notify_all();
}

// read_body reads a frame's n bytes into buf. Up to a MiB is trusted with
// memory before bytes arrive; once the first MiB has come the whole body
// is allocated at once: growing by doubling touched (or copied) up to
// twice the body, and fresh pages are what large calls pay for.
inline void read_body(int fd, Buffer& buf, std::size_t n, const char* what) {
    constexpr std::size_t first = 1 << 20;
    buf.size = 0;
    while (buf.size < n) {
        if (buf.size == buf.capacity) buf.reserve(buf.size < first ? std::min(n, first) : n);
        ssize_t r = ::read(fd, buf.data.get() + buf.size, std::min(n, buf.capacity) - buf.size);
        if (r < 0) {
            if (errno == EINTR) continue;
            protocol_error(std::string("reading descriptor ") + std::to_string(fd) + ": " + std::strerror(errno));
        }
        if (r == 0) protocol_error(std::string("end of file inside ") + what);
        buf.size += std::size_t(r);
    }
}

// read_header reads a frame header; false at end of file before it.
inline bool read_header(int fd, std::uint32_t& header) {
    unsigned char h[4];
    std::size_t got = 0;
    while (got < 4) {
        ssize_t r = ::read(fd, h + got, 4 - got);
        if (r < 0) {
            if (errno == EINTR) continue;
            protocol_error(std::string("reading descriptor ") + std::to_string(fd) + ": " + std::strerror(errno));
        }
        if (r == 0) {
            if (got == 0) return false;
            protocol_error("end of file inside a frame header");
        }
        got += std::size_t(r);
    }
    header = std::uint32_t(h[0]) << 24 | std::uint32_t(h[1]) << 16 | std::uint32_t(h[2]) << 8 | h[3];
    return true;
}

// take_arrays pairs a message's array descriptors with the blobs that came
// before it; a mismatch is a protocol error.
inline std::vector<InArray> take_arrays(const json& message, const std::string& type, std::vector<Buffer>& blobs) {
    std::vector<InArray> arrays;
    auto it = message.find("arrays");
    if (it == message.end() || (it->is_array() && it->empty())) {
        if (!blobs.empty())
            protocol_error(std::to_string(blobs.size()) + " blobs came before a " + type + " message that describes none");
        return arrays;
    }
    if (!it->is_array()) protocol_error("a " + type + " message's arrays is not a list");
    if (it->size() != blobs.size())
        protocol_error("a " + type + " message describes " + std::to_string(it->size()) + " arrays but " +
                       std::to_string(blobs.size()) + " blobs came before it");
    arrays.reserve(blobs.size());
    for (std::size_t i = 0; i < blobs.size(); ++i) {
        const json& d = (*it)[i];
        auto bad = [&](const std::string& why) { protocol_error("array " + std::to_string(i) + " " + d.dump() + ": " + why); };
        if (!d.is_object()) bad("not an object");
        InArray a;
        auto path = d.find("path");
        if (path == d.end() || !path->is_array()) bad("no path list");
        a.path = *path;
        auto dtype = d.find("dtype");
        if (dtype == d.end() || !dtype->is_string()) bad("no dtype");
        const std::string& name = dtype->get_ref<const std::string&>();
        if (name == "i4") a.dtype = DType::i4;
        else if (name == "i8") a.dtype = DType::i8;
        else if (name == "f8") a.dtype = DType::f8;
        else bad("unknown dtype (this pool takes i4, i8 and f8)");
        auto shape = d.find("shape");
        // shape [] (rank 0) is one number: how a NaN or an infinity comes as an argument
        if (shape == d.end() || !shape->is_array()) bad("no shape (a list of lengths)");
        std::size_t count = 1;
        for (const json& n : *shape) {
            if (!n.is_number_unsigned()) bad("a length in the shape is not a non-negative integer");
            auto len = n.get<std::uint64_t>();
            if (len > max_frame || (len > 0 && count > max_frame / len)) bad("the shape holds too many elements");
            a.shape.push_back(static_cast<std::size_t>(len));
            count *= static_cast<std::size_t>(len);
        }
        if (count * dtype_size(a.dtype) != blobs[i].size)
            bad("it needs " + std::to_string(count * dtype_size(a.dtype)) + " bytes, the blob has " + std::to_string(blobs[i].size));
        a.blob = std::move(blobs[i]);
        arrays.push_back(std::move(a));
    }
    blobs.clear();
    return arrays;
}

// open_descriptors reads NEXUS_POOL_IN and NEXUS_POOL_OUT, refusing to run
// without them, and keeps the descriptors from children the pool starts.
inline void open_descriptors() {
    Runtime& rt = runtime();
    const char* in = std::getenv("NEXUS_POOL_IN");
    const char* out = std::getenv("NEXUS_POOL_OUT");
    if (const char* lang = std::getenv("NEXUS_POOL_LANG"); lang != nullptr && *lang != '\0') rt.lang = lang;
    if (in == nullptr || out == nullptr) {
        std::fprintf(stderr,
                     "This program is a nexus pool: nexus starts it and talks to it over a pipe "
                     "(NEXUS_POOL_IN is not set). Run the program through nexus instead.\n");
        exit_now(2);
    }
    auto parse = [&](const char* text) {
        char* end = nullptr;
        errno = 0;
        long fd = std::strtol(text, &end, 10);
        struct stat st {};
        if (errno != 0 || end == text || *end != '\0' || fd < 0 || fd > 1 << 20 || fstat(int(fd), &st) != 0) {
            std::fprintf(stderr, "nexus pool %s: bad NEXUS_POOL_IN/NEXUS_POOL_OUT (%s, %s)\n", rt.lang.c_str(), in, out);
            exit_now(2);
        }
        int flags = fcntl(int(fd), F_GETFD);
        if (flags >= 0) fcntl(int(fd), F_SETFD, flags | FD_CLOEXEC);  // children must not hold the protocol open
        return int(fd);
    };
    rt.in_fd = parse(in);
    rt.out_fd = parse(out);
}

// MessageReader builds a message from nlohmann's parse events, as
// json::parse would, except that in a call (whose "type" and "mid" come
// before its "args", as nexus writes them) an argument that the function
// takes as a vector of numbers is built straight from the numbers, with no
// json tree to build and free: its place in args holds null. Whatever it
// does not expect makes it give up (the events return false), and the
// message is parsed the ordinary way.
class MessageReader {
public:
    using number_integer_t = json::number_integer_t;
    using number_unsigned_t = json::number_unsigned_t;
    using number_float_t = json::number_float_t;
    using string_t = json::string_t;
    using binary_t = json::binary_t;

    explicit MessageReader(const std::map<long long, Entry>& table) : table_(table) {}

    json root;
    std::vector<std::shared_ptr<void>> typed;

    bool null() { return sink_ ? false : add(json(nullptr)); }
    bool boolean(bool b) { return sink_ ? false : add(json(b)); }
    bool number_integer(number_integer_t v) {
        if (sink_) return sink_->integer(v);
        if (at(mid)) take_mid(v >= 0 ? std::optional<long long>(v) : std::nullopt);
        return add(json(v));
    }
    bool number_unsigned(number_unsigned_t v) {
        if (sink_) return sink_->whole(v);
        if (at(mid))
            take_mid(v <= std::uint64_t(std::numeric_limits<long long>::max()) ? std::optional<long long>(static_cast<long long>(v)) : std::nullopt);
        return add(json(v));
    }
    bool number_float(number_float_t v, const string_t&) {
        if (sink_) return sink_->real(v);
        if (at(mid)) take_mid(std::nullopt);
        return add(json(v));
    }
    bool string(string_t& v) {
        if (sink_) return false;
        if (at(type)) call_ = v == "call";
        return add(json(std::move(v)));
    }
    bool binary(binary_t&) { return false; }
    bool start_object(std::size_t) {
        if (sink_) return false;
        json* made = add_container(json::object());
        return made != nullptr;
    }
    bool key(string_t& k) {
        if (stack_.size() == 1) {
            member_ = k == "type" ? type : k == "mid" ? mid : k == "args" ? args : other;
            // A repeated member that decides how the call is read: let json::parse handle it.
            if (seen_ & member_) return false;
            seen_ |= member_;
        }
        slot_ = &stack_.back()->get_ref<json::object_t&>()[k];
        return true;
    }
    bool end_object() {
        stack_.pop_back();
        return true;
    }
    bool start_array(std::size_t) {
        if (sink_) return sink_->start_array();
        if (args_ != nullptr && stack_.back() == args_ && entry_ != nullptr) {
            std::size_t index = args_->size();
            if (index < entry_->sinks.size() && entry_->sinks[index] != nullptr) {
                sink_ = entry_->sinks[index]();
                sink_index_ = index;
                if (!add(json(nullptr))) return false;
                return sink_->start_array();
            }
        }
        bool is_args = at(args);
        json* made = add_container(json::array());
        if (made != nullptr && is_args) args_ = made;
        return made != nullptr;
    }
    bool end_array() {
        if (sink_) {
            if (!sink_->end_array()) return false;
            if (sink_->done()) {
                if (typed.size() <= sink_index_) typed.resize(sink_index_ + 1);
                typed[sink_index_] = sink_->take();
                sink_.reset();
            }
            return true;
        }
        stack_.pop_back();
        return true;
    }
    template <class Exception>
    bool parse_error(std::size_t, const std::string&, const Exception&) {
        return false;
    }

private:
    enum Member { other = 0, type = 1, mid = 2, args = 4 };  // of the root object

    // at says the parse is at the value of the root object's member m.
    bool at(Member m) const { return member_ == m && stack_.size() == 1 && stack_.back()->is_object(); }

    void take_mid(std::optional<long long> value) {
        entry_ = nullptr;
        if (!call_ || !value || args_ != nullptr) return;
        auto it = table_.find(*value);
        if (it != table_.end()) entry_ = &it->second;
    }

    // add puts a value where the parse is: the root, the end of an array,
    // or the member named by the last key.
    bool add(json&& v) { return place(std::move(v)) != nullptr; }

    json* place(json&& v) {
        if (stack_.empty()) {
            root = std::move(v);
            return &root;
        }
        json& parent = *stack_.back();
        if (parent.is_array()) {
            auto& items = parent.get_ref<json::array_t&>();
            items.push_back(std::move(v));
            return &items.back();
        }
        *slot_ = std::move(v);
        return slot_;
    }

    json* add_container(json&& v) {
        json* at = place(std::move(v));
        if (at != nullptr) stack_.push_back(at);
        return at;
    }

    const std::map<long long, Entry>& table_;
    std::vector<json*> stack_;  // the open objects and arrays
    json* slot_ = nullptr;      // where an object's next value goes
    Member member_ = other;     // the root object's current member
    int seen_ = 0;              // the Members met so far
    bool call_ = false;
    const Entry* entry_ = nullptr;
    json* args_ = nullptr;
    std::unique_ptr<Sink> sink_;
    std::size_t sink_index_ = 0;
};

// A smaller message is parsed by json::parse alone, which is cheaper
// when no argument is large.
constexpr std::size_t min_read_message = 4096;

// parse_message parses a message body, with its typed arguments (see
// MessageReader); a body that is not JSON is a protocol error.
inline json parse_message(const char* p, std::size_t n, std::vector<std::shared_ptr<void>>& typed) {
    MessageReader reader(runtime().table);
    bool ok = false;
    if (n >= min_read_message) {
        try {
            ok = json::sax_parse(p, p + n, &reader);
        } catch (const std::exception&) {
            ok = false;  // json::parse below says what is wrong, if anything
        }
    }
    if (ok) {
        typed = std::move(reader.typed);
        return std::move(reader.root);
    }
    typed.clear();
    try {
        return json::parse(p, p + n);
    } catch (const json::exception& e) {
        protocol_error("bad message: " + strip_nlohmann(e.what()));
    }
}

// serve_loop reads frames until end of file or shutdown.
inline void serve_loop() {
    Runtime& rt = runtime();
    Buffer buf;  // message bodies
    std::vector<Buffer> blobs;  // blobs waiting for their message
    std::uint32_t header = 0;
    while (read_header(rt.in_fd, header)) {
        if (header & 0x80000000u) {
            std::size_t size = header & 0x7FFFFFFFu;
            if (size > max_frame) protocol_error("blob length " + std::to_string(size) + " is over " + std::to_string(max_frame));
            Buffer blob;
            read_body(rt.in_fd, blob, size, "a blob");
            blobs.push_back(std::move(blob));
            continue;
        }
        std::size_t size = header;
        if (size < 2 || size > max_frame)
            protocol_error("frame length " + std::to_string(size) + " is outside 2.." + std::to_string(max_frame));
        read_body(rt.in_fd, buf, size, "a frame");
        std::vector<std::shared_ptr<void>> typed;
        json message = parse_message(buf.data.get(), size, typed);
        if (buf.capacity > (1 << 20)) buf = Buffer();  // a large message's memory goes back
        if (!message.is_object()) protocol_error("a message is not an object with a type");
        auto type_it = message.find("type");
        if (type_it == message.end() || !type_it->is_string()) protocol_error("a message is not an object with a type");
        const std::string& type = type_it->get_ref<const std::string&>();
        std::vector<InArray> arrays = take_arrays(message, type, blobs);
        if (type == "call") start_call(message, std::move(arrays), std::move(typed));
        else if (type == "cancel") cancel_call(message);
        else if (type == "answer") answer_ask(message);
        else if (type == "shutdown") break;
        // other types are ignored: newer nexus versions may send them
    }
}

// --- function adaptation --------------------------------------------------------

template <class R, class... A>
struct Signature {};

template <class T, class = void>
struct has_call_operator : std::false_type {};
template <class T>
struct has_call_operator<T, std::void_t<decltype(&T::operator())>> : std::true_type {};

template <class T, class = void>
struct signature_of {
    static_assert(dependent_false<T>,
                  "nexus: Pool::add needs a function, a function pointer, a std::function or a lambda "
                  "with fixed parameter types (not auto)");
};
template <class T>
struct signature_of<T, std::enable_if_t<has_call_operator<T>::value>> : signature_of<decltype(&T::operator())> {};
template <class R, class... A>
struct signature_of<R (*)(A...)> {
    using type = Signature<R, A...>;
};
template <class R, class... A>
struct signature_of<R (*)(A...) noexcept> : signature_of<R (*)(A...)> {};
template <class C, class R, class... A>
struct signature_of<R (C::*)(A...)> : signature_of<R (*)(A...)> {};
template <class C, class R, class... A>
struct signature_of<R (C::*)(A...) const> : signature_of<R (*)(A...)> {};
template <class C, class R, class... A>
struct signature_of<R (C::*)(A...) noexcept> : signature_of<R (*)(A...)> {};
template <class C, class R, class... A>
struct signature_of<R (C::*)(A...) const noexcept> : signature_of<R (*)(A...)> {};

// place_arrays turns into JSON, in their places in args, the arrays that
// do not fill a parameter directly: those inside an argument, and those
// whose parameter type has no fast path (ranks[i] is parameter i's
// array_traits rank) or another rank.
template <std::size_t N>
void place_arrays(CallInput& in, const std::array<std::size_t, N>& ranks) {
    for (InArray& a : in.arrays) {
        if (a.path.size() == 1 && !a.shape.empty() && ranks[a.arg] == a.shape.size()) continue;
        std::size_t next = 0;
        place_of(in.args, a, "") = a.shape.empty() ? element_json(a, 0) : array_json(a, 0, next);
        a.placed = true;
        a.blob = Buffer();
    }
}

template <class T>
T decode_argument(CallInput& in, std::size_t index) {
    try {
        if constexpr (array_traits<T>::rank > 0) {
            if (index < in.typed.size() && in.typed[index] != nullptr) {
                T value = std::move(*std::static_pointer_cast<T>(in.typed[index]));
                in.typed[index].reset();
                return value;
            }
            for (InArray& a : in.arrays) {
                if (a.placed || a.arg != index) continue;
                std::size_t next = 0;
                T value = from_array<T>(a, 0, next);
                a.blob = Buffer();
                return value;
            }
        }
        json& j = in.args[index];
        if constexpr (std::is_same_v<T, json>) {
            return std::move(j);
        } else {
            T value = Codec<T>::decode(j);
            j = nullptr;  // its memory goes back before the function runs
            return value;
        }
    } catch (const PathError& e) {
        throw ConversionError(where("argument " + std::to_string(index + 1), e));
    } catch (const ConversionError&) {
        throw;
    } catch (const std::exception& e) {  // a user Codec's own failure
        throw ConversionError("argument " + std::to_string(index + 1) + ": " + e.what());
    }
}

// encode_result converts a function's result: as one array when nexus
// takes one of this rank and the value makes one, else as JSON. movable
// says the array may take the value's own memory.
template <class R, class V>
Reply encode_result(V& value, std::size_t ret_rank, bool movable) {
    using T = plain<R>;
    if constexpr (std::is_same_v<T, Content>) {
        return Reply{value.value, json(value.blocks), nullptr, std::nullopt};
    } else {
        try {
            if constexpr (array_traits<T>::rank > 0) {
                if (ret_rank == array_traits<T>::rank) {
                    if (auto array = to_array(value, movable)) return Reply{json(nullptr), std::nullopt, std::move(array), std::nullopt};
                }
                std::string text;
                append_array_text(text, value);
                return Reply{json(nullptr), std::nullopt, nullptr, std::move(text)};
            }
            return Reply{Codec<T>::encode(value), std::nullopt, nullptr, std::nullopt};
        } catch (const PathError& e) {
            throw ConversionError(where("result", e));
        }
    }
}

template <class F, class R, class... A, std::size_t... I>
Reply invoke(F& fn, CallInput& in, std::index_sequence<I...>) {
    place_arrays(in, std::array<std::size_t, sizeof...(A)>{array_traits<plain<A>>::rank...});
    // Braced initialization decodes left to right: the first bad argument is reported.
    [[maybe_unused]] std::tuple<plain<A>...> values{decode_argument<plain<A>>(in, I)...};
    if constexpr (std::is_void_v<R>) {
        fn(std::forward<A>(std::get<I>(values))...);
        return Reply{json(nullptr), std::nullopt, nullptr, std::nullopt};
    } else {
        decltype(auto) result = fn(std::forward<A>(std::get<I>(values))...);
        constexpr bool movable = !std::is_reference_v<R> && !std::is_const_v<R>;
        return encode_result<R>(result, in.ret_rank, movable);
    }
}

template <class F, class R, class... A>
Entry make_entry(std::shared_ptr<F> fn, Signature<R, A...>) {
    Entry entry;
    entry.sinks = {sink_maker<plain<A>>()...};
    entry.handler = [fn](CallInput& in) -> Reply {
        constexpr std::size_t want = sizeof...(A);
        if (in.args.size() != want)
            throw ConversionError("expected " + std::to_string(want) + (want == 1 ? " argument" : " arguments") + ", got " +
                                  std::to_string(in.args.size()));
        return invoke<F, R, A...>(*fn, in, std::index_sequence_for<A...>{});
    };
    return entry;
}

}  // namespace detail


// --- public API ------------------------------------------------------------------

// Pool is a pool's dispatch table: add each function under its mid, then serve.
class Pool {
public:
    // add registers fn (a function, function pointer, std::function or lambda
    // with fixed parameter types) under mid. Registering a mid twice throws
    // std::invalid_argument.
    template <class F>
    Pool& add(long long mid, F&& fn) {
        using Fn = std::decay_t<F>;
        using Sig = typename detail::signature_of<Fn>::type;
        if (table_.count(mid) != 0) throw std::invalid_argument("nexus: mid " + std::to_string(mid) + " is registered twice");
        table_.emplace(mid, detail::make_entry(std::make_shared<Fn>(std::forward<F>(fn)), Sig{}));
        return *this;
    }

    // serve sends ready and runs calls, each on a thread of its own (worker
    // threads are reused), until nexus closes descriptor 3 or sends
    // shutdown; then it ends the process with status 0 at once (std::_Exit
    // after flushing stdout), without waiting for calls still running and
    // without running static destructors. It never returns; the int is for
    // `return pool.serve();` in main. Run by hand (NEXUS_POOL_IN unset), it
    // says so on stderr and exits with 2.
    [[noreturn]] int serve() {
        detail::Runtime& rt = detail::runtime();
        detail::open_descriptors();
        rt.table = std::move(table_);
        detail::install_crash_handlers();
        json mids = json::array();
        for (const auto& entry : rt.table) mids.push_back(entry.first);
        json ready = {{"type", "ready"}, {"protocol", protocol_version}, {"lang", "cpp"}, {"pid", static_cast<long long>(::getpid())}, {"mids", mids}, {"concurrent", true}};
        if (detail::takes_arrays) ready["arrays"] = {"i4", "i8", "f8"};
        detail::write_frame(ready.dump());
        detail::serve_loop();
        detail::exit_now(0);
    }

private:
    std::map<long long, detail::Entry> table_;
};

// cancelled is true once nexus has cancelled the current call. A long call
// should poll it (or use throw_if_cancelled / sleep_for) and stop early:
// nexus has already answered its client, and a worker that keeps running
// only burns CPU until it finishes.
inline bool cancelled() {
    const detail::CallState* call = detail::current_call;
    return call != nullptr && call->cancelled.load();
}

// throw_if_cancelled throws nexus::Cancelled once the current call is cancelled.
inline void throw_if_cancelled() {
    if (cancelled()) throw Cancelled{};
}

// sleep_for sleeps, but wakes and throws nexus::Cancelled as soon as the
// current call is cancelled.
template <class Rep, class Period>
void sleep_for(const std::chrono::duration<Rep, Period>& duration) {
    detail::CallState* call = detail::current_call;
    if (call == nullptr) {
        std::this_thread::sleep_for(duration);
        return;
    }
    std::unique_lock<std::mutex> lock(call->mu);
    if (call->cv.wait_for(lock, duration, [call] { return call->cancelled.load(); })) throw Cancelled{};
}

// progress reports how far the current call has got: done out of total
// (when known), with a message. It does nothing outside a call's thread or
// when the client did not ask for progress. It throws std::invalid_argument
// for a number that is not finite.
inline void progress(double done, std::optional<double> total = std::nullopt, const std::string& message = std::string()) {
    const detail::CallState* call = detail::current_call;
    if (call == nullptr || !call->progress) return;
    if (!std::isfinite(done) || (total && !std::isfinite(*total)))
        throw std::invalid_argument("nexus::progress: progress and total must be finite numbers");
    json frame = {{"type", "progress"}, {"id", call->id}, {"progress", detail::number(done)}};
    if (total) frame["total"] = detail::number(*total);
    if (!message.empty()) frame["message"] = message;
    detail::write_frame(frame.dump(-1, ' ', false, json::error_handler_t::replace));
}

// log sends a log record at an MCP level ("debug", "info", "notice",
// "warning", "error", ...); data is any value the runtime can convert. The
// record belongs to the current call when there is one. Before serve() it
// is written to stderr.
template <class T>
void log(const std::string& level, const T& data) {
    json frame = {{"type", "log"}, {"level", level}};
    if (const detail::CallState* call = detail::current_call) frame["id"] = call->id;
    frame["data"] = encode(data);
    detail::write_frame(frame.dump(-1, ' ', false, json::error_handler_t::replace));
}

inline void log(const std::string& level, const char* text) { log(level, std::string(text)); }

// --- asking the client ------------------------------------------------------------

namespace detail {

// ask sends an ask for the current call and waits for nexus's answer: it
// returns the client's result object, or throws AskError, or Cancelled
// when the call is cancelled meanwhile.
inline json ask(const char* kind, json params, const std::string& fname, const std::string& key = std::string()) {
    CallState* call = current_call;
    if (call == nullptr || runtime().out_fd < 0)
        throw AskError(fname + ": not in a call: only a function nexus runs can ask the client "
                               "(on a thread of your own, wrap the work in nexus::within_call)");
    call->asking = true;  // before looking at ended: run_call stores ended, then reads asking
    long long n = 0;
    {
        std::lock_guard<std::mutex> lock(call->mu);
        if (call->cancelled) throw Cancelled{};
        if (call->ended) throw AskError(fname + ": the call ended before the client answered");
        n = ++call->asked;
        call->asks.emplace(n, std::nullopt);
    }
    json frame = {{"type", "ask"}, {"id", call->id}, {"ask", n}, {"kind", kind}, {"params", std::move(params)}};
    if (!key.empty()) frame["key"] = key;
    write_frame(frame.dump(-1, ' ', false, json::error_handler_t::replace));
    std::optional<json> answer;
    {
        std::unique_lock<std::mutex> lock(call->mu);
        auto it = call->asks.find(n);
        call->cv.wait(lock, [&] { return it->second.has_value() || call->cancelled.load() || call->ended.load(); });
        answer = std::move(it->second);
        call->asks.erase(it);
    }
    if (!answer) {
        if (call->cancelled) throw Cancelled{};
        throw AskError(fname + ": the call ended before the client answered");
    }
    auto error = answer->find("error");
    if (error != answer->end()) throw AskError(error->is_string() ? error->get<std::string>() : error->dump());
    auto result = answer->find("result");
    if (result == answer->end() || !result->is_object()) throw AskError(fname + ": nexus answered without a result");
    return std::move(*result);
}

// sample_messages makes sample's prompt MCP sampling messages: a string
// is one user message; each message's string content a text block.
inline json sample_messages(const json& prompt) {
    if (prompt.is_string()) return json::array({{{"role", "user"}, {"content", nexus::text(prompt.get<std::string>())}}});
    if (!prompt.is_array() || prompt.empty())
        throw std::invalid_argument("nexus::sample: prompt must be a string or a non-empty array of {\"role\", \"content\"} objects");
    json messages = json::array();
    for (std::size_t i = 0; i < prompt.size(); ++i) {
        const json& m = prompt[i];
        if (!m.is_object() || !m.contains("role") || !m["role"].is_string() || !m.contains("content"))
            throw std::invalid_argument("nexus::sample: message " + std::to_string(i) + " is not an object with a string role and a content");
        json message = m;
        const json& content = m["content"];
        if (content.is_string()) message["content"] = nexus::text(content.get<std::string>());
        else if (!content.is_object() && !content.is_array())
            throw std::invalid_argument("nexus::sample: message " + std::to_string(i) + ": content must be a string or a content block");
        messages.push_back(std::move(message));
    }
    return messages;
}

// reply_text is the text of a sampling result: its text block, or its
// text blocks joined.
inline std::string reply_text(const json& result) {
    auto content = result.find("content");
    json blocks = content == result.end() ? json::array() : content->is_array() ? *content : json::array({*content});
    std::string text, kinds;
    bool found = false;
    for (const json& b : blocks) {
        bool typed = b.is_object() && b.contains("type") && b["type"].is_string();
        if (!kinds.empty()) kinds += ", ";
        kinds += typed ? b["type"].get<std::string>() : std::string("?");
        if (typed && b["type"] == "text" && b.contains("text") && b["text"].is_string()) {
            text += b["text"].get<std::string>();
            found = true;
        }
    }
    if (!found) throw AskError("nexus::sample: the model's reply holds no text (content: " + kinds + ")");
    return text;
}

// current_call_shared is the current call, kept alive, or null.
inline std::shared_ptr<CallState> current_call_shared() {
    if (current_call == nullptr) return nullptr;
    Runtime& rt = runtime();
    std::lock_guard<std::mutex> lock(rt.calls_mu);
    auto it = rt.calls.find(current_call->id_text);
    return it == rt.calls.end() ? nullptr : it->second;
}

}  // namespace detail

// elicit asks the user, through the client, for the values schema describes
// (a JSON Schema object of flat properties, as json or as JSON text; MCP
// elicitation's requestedSchema). It blocks until the user answers and
// returns the client's answer as it came: {"action": "accept", "content":
// {...}}, or {"action": "decline"} or {"action": "cancel"}. It throws
// AskError when the client cannot answer, Cancelled when the call is
// cancelled meanwhile, std::invalid_argument for a schema that is no object.
//
// key (all three) names the question where a client sees it by name
// (2026-07-28's inputRequests); empty, nexus names it after its content.
inline json elicit(const std::string& message, const json& schema, const std::string& key = std::string()) {
    json requested = schema;
    if (schema.is_string()) {
        try {
            requested = json::parse(schema.get<std::string>());
        } catch (const json::exception& e) {
            throw std::invalid_argument("nexus::elicit: schema is not valid JSON: " + detail::strip_nlohmann(e.what()));
        }
    }
    if (!requested.is_object()) throw std::invalid_argument("nexus::elicit: schema must be a JSON object (a JSON Schema)");
    return detail::ask("elicit", json{{"message", message}, {"requestedSchema", std::move(requested)}}, "nexus::elicit", key);
}

// sample asks the client's language model and returns the text of its
// reply. prompt is one user message, or (the json overload) an array of
// {"role": "user" or "assistant", "content": a string or a content block}.
// It blocks until the reply comes; it throws AskError when the client
// cannot answer or the reply holds no text, Cancelled when the call is
// cancelled meanwhile.
inline std::string sample(const json& messages, int max_tokens = 1000, const std::string& system = std::string(), const std::string& key = std::string()) {
    if (max_tokens < 1) throw std::invalid_argument("nexus::sample: max_tokens must be positive");
    json params = {{"messages", detail::sample_messages(messages)}, {"maxTokens", max_tokens}};
    if (!system.empty()) params["systemPrompt"] = system;
    return detail::reply_text(detail::ask("sample", std::move(params), "nexus::sample", key));
}

inline std::string sample(const std::string& prompt, int max_tokens = 1000, const std::string& system = std::string(), const std::string& key = std::string()) {
    return sample(json(prompt), max_tokens, system, key);
}

inline std::string sample(const char* prompt, int max_tokens = 1000, const std::string& system = std::string(), const std::string& key = std::string()) {
    return sample(json(prompt), max_tokens, system, key);
}

// roots returns the client's roots (the directories the user opened): an
// array of {"uri", "name"} objects ("name" may be missing). It throws
// AskError when the client cannot tell, Cancelled when the call is
// cancelled meanwhile.
inline json roots(const std::string& key = std::string()) {
    json result = detail::ask("roots", json::object(), "nexus::roots", key);
    auto found = result.find("roots");
    if (found == result.end() || !found->is_array()) throw AskError("nexus::roots: the client's answer holds no list of roots");
    return std::move(*found);
}

// within_call wraps fn so that, run on another thread, it belongs to the
// current call: elicit, sample, roots, progress, log and cancelled find
// their call through the thread that runs them, and a thread the function
// starts has none.
//
//     auto summary = std::async(std::launch::async, nexus::within_call([&] { return nexus::sample(text); }));
template <class F>
auto within_call(F fn) {
    return [call = detail::current_call_shared(), fn = std::move(fn)](auto&&... args) mutable -> decltype(auto) {
        struct Restore {
            detail::CallState* previous;
            ~Restore() { detail::current_call = previous; }
        } restore{detail::current_call};
        detail::current_call = call.get();
        return fn(std::forward<decltype(args)>(args)...);
    };
}

}  // namespace nexus

// NEXUS_RECORD(Type, field, ...) lets a struct travel as a JSON object keyed
// by its field names. Write it after the struct, in the struct's namespace.
// Fields of type std::optional may be missing from the object. Up to 64
// fields; Type must be default-constructible and a single name (use an
// alias for a template instance).
#define NEXUS_RECORD(Type, ...)                                                     \
    [[maybe_unused]] inline auto nexus_record_fields(const Type*) {                 \
        using nexus_record_type = Type;                                             \
        return std::make_tuple(NEXUS_DETAIL_FIELDS(__VA_ARGS__));                   \
    }                                                                               \
    [[maybe_unused]] inline const char* nexus_record_name(const Type*) { return #Type; }

#define NEXUS_DETAIL_FIELD(f) ::nexus::detail::field(#f, &nexus_record_type::f)

// NEXUS_DETAIL_FIELDS applies NEXUS_DETAIL_FIELD to each of up to 64 names.
// (A generated table: one macro per count.)
#define NEXUS_DETAIL_EXPAND(x) x
#define NEXUS_DETAIL_PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, _33, _34, _35, _36, _37, _38, _39, _40, _41, _42, _43, _44, _45, _46, _47, _48, _49, _50, _51, _52, _53, _54, _55, _56, _57, _58, _59, _60, _61, _62, _63, _64, n, ...) n
#define NEXUS_DETAIL_COUNT(...) NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_PICK(__VA_ARGS__, 64, 63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1))
#define NEXUS_DETAIL_CAT(a, b) NEXUS_DETAIL_CAT_(a, b)
#define NEXUS_DETAIL_CAT_(a, b) a##b
#define NEXUS_DETAIL_FIELDS(...) NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_CAT(NEXUS_DETAIL_F, NEXUS_DETAIL_COUNT(__VA_ARGS__))(__VA_ARGS__))
#define NEXUS_DETAIL_F1(f) NEXUS_DETAIL_FIELD(f)
#define NEXUS_DETAIL_F2(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F1(__VA_ARGS__))
#define NEXUS_DETAIL_F3(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F2(__VA_ARGS__))
#define NEXUS_DETAIL_F4(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F3(__VA_ARGS__))
#define NEXUS_DETAIL_F5(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F4(__VA_ARGS__))
#define NEXUS_DETAIL_F6(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F5(__VA_ARGS__))
#define NEXUS_DETAIL_F7(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F6(__VA_ARGS__))
#define NEXUS_DETAIL_F8(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F7(__VA_ARGS__))
#define NEXUS_DETAIL_F9(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F8(__VA_ARGS__))
#define NEXUS_DETAIL_F10(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F9(__VA_ARGS__))
#define NEXUS_DETAIL_F11(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F10(__VA_ARGS__))
#define NEXUS_DETAIL_F12(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F11(__VA_ARGS__))
#define NEXUS_DETAIL_F13(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F12(__VA_ARGS__))
#define NEXUS_DETAIL_F14(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F13(__VA_ARGS__))
#define NEXUS_DETAIL_F15(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F14(__VA_ARGS__))
#define NEXUS_DETAIL_F16(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F15(__VA_ARGS__))
#define NEXUS_DETAIL_F17(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F16(__VA_ARGS__))
#define NEXUS_DETAIL_F18(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F17(__VA_ARGS__))
#define NEXUS_DETAIL_F19(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F18(__VA_ARGS__))
#define NEXUS_DETAIL_F20(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F19(__VA_ARGS__))
#define NEXUS_DETAIL_F21(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F20(__VA_ARGS__))
#define NEXUS_DETAIL_F22(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F21(__VA_ARGS__))
#define NEXUS_DETAIL_F23(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F22(__VA_ARGS__))
#define NEXUS_DETAIL_F24(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F23(__VA_ARGS__))
#define NEXUS_DETAIL_F25(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F24(__VA_ARGS__))
#define NEXUS_DETAIL_F26(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F25(__VA_ARGS__))
#define NEXUS_DETAIL_F27(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F26(__VA_ARGS__))
#define NEXUS_DETAIL_F28(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F27(__VA_ARGS__))
#define NEXUS_DETAIL_F29(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F28(__VA_ARGS__))
#define NEXUS_DETAIL_F30(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F29(__VA_ARGS__))
#define NEXUS_DETAIL_F31(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F30(__VA_ARGS__))
#define NEXUS_DETAIL_F32(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F31(__VA_ARGS__))
#define NEXUS_DETAIL_F33(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F32(__VA_ARGS__))
#define NEXUS_DETAIL_F34(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F33(__VA_ARGS__))
#define NEXUS_DETAIL_F35(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F34(__VA_ARGS__))
#define NEXUS_DETAIL_F36(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F35(__VA_ARGS__))
#define NEXUS_DETAIL_F37(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F36(__VA_ARGS__))
#define NEXUS_DETAIL_F38(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F37(__VA_ARGS__))
#define NEXUS_DETAIL_F39(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F38(__VA_ARGS__))
#define NEXUS_DETAIL_F40(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F39(__VA_ARGS__))
#define NEXUS_DETAIL_F41(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F40(__VA_ARGS__))
#define NEXUS_DETAIL_F42(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F41(__VA_ARGS__))
#define NEXUS_DETAIL_F43(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F42(__VA_ARGS__))
#define NEXUS_DETAIL_F44(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F43(__VA_ARGS__))
#define NEXUS_DETAIL_F45(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F44(__VA_ARGS__))
#define NEXUS_DETAIL_F46(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F45(__VA_ARGS__))
#define NEXUS_DETAIL_F47(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F46(__VA_ARGS__))
#define NEXUS_DETAIL_F48(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F47(__VA_ARGS__))
#define NEXUS_DETAIL_F49(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F48(__VA_ARGS__))
#define NEXUS_DETAIL_F50(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F49(__VA_ARGS__))
#define NEXUS_DETAIL_F51(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F50(__VA_ARGS__))
#define NEXUS_DETAIL_F52(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F51(__VA_ARGS__))
#define NEXUS_DETAIL_F53(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F52(__VA_ARGS__))
#define NEXUS_DETAIL_F54(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F53(__VA_ARGS__))
#define NEXUS_DETAIL_F55(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F54(__VA_ARGS__))
#define NEXUS_DETAIL_F56(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F55(__VA_ARGS__))
#define NEXUS_DETAIL_F57(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F56(__VA_ARGS__))
#define NEXUS_DETAIL_F58(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F57(__VA_ARGS__))
#define NEXUS_DETAIL_F59(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F58(__VA_ARGS__))
#define NEXUS_DETAIL_F60(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F59(__VA_ARGS__))
#define NEXUS_DETAIL_F61(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F60(__VA_ARGS__))
#define NEXUS_DETAIL_F62(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F61(__VA_ARGS__))
#define NEXUS_DETAIL_F63(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F62(__VA_ARGS__))
#define NEXUS_DETAIL_F64(f, ...) NEXUS_DETAIL_FIELD(f), NEXUS_DETAIL_EXPAND(NEXUS_DETAIL_F63(__VA_ARGS__))

#endif  // NEXUS_POOL_RUNTIME_HPP
