#include "eval/python_format.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "util/error.h"

namespace gpstream::eval {

std::string python_float_repr(double x) {
  if (std::isnan(x)) return "NaN";  // json.dumps spelling (repr would be 'nan')
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  if (x == 0.0) return std::signbit(x) ? "-0.0" : "0.0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  GPS_ASSERT(res.ec == std::errc(), "to_chars failed");
  std::string sci(buf, res.ptr);  // e.g. "-1.2345e+02"
  bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  const size_t e = sci.find('e');
  std::string digits;
  for (size_t i = 0; i < e; ++i) {
    if (sci[i] != '.') digits += sci[i];
  }
  const int exp10 = std::atoi(sci.c_str() + e + 1);
  std::string out = neg ? "-" : "";
  if (exp10 >= -4 && exp10 < 16) {
    if (exp10 >= 0) {
      const auto int_len = static_cast<size_t>(exp10) + 1;
      if (digits.size() <= int_len) {
        out += digits;
        out.append(int_len - digits.size(), '0');
        out += ".0";
      } else {
        out.append(digits, 0, int_len);
        out += '.';
        out.append(digits, int_len, std::string::npos);
      }
    } else {
      out += "0.";
      out.append(static_cast<size_t>(-exp10 - 1), '0');
      out += digits;
    }
  } else {
    out += digits[0];
    if (digits.size() > 1) {
      out += '.';
      out.append(digits, 1, std::string::npos);
    }
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
    out += eb;
  }
  return out;
}

std::string python_repr(const PyNumber& x) {
  if (x.is_int) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", x.value);
    return buf;
  }
  return python_float_repr(x.value);
}

double python_round(double x, int ndigits) {
  if (!std::isfinite(x)) return x;
  // CPython's float round: the exact decimal expansion rounded half-even (_Py_dg_dtoa mode 3), then
  // parsed back. glibc's printf rounds the exact binary value the same way.
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*f", ndigits, x);
  return std::strtod(buf, nullptr);
}

PyNumber python_round(const PyNumber& x, int ndigits) {
  if (x.is_int) return x;
  return {python_round(x.value, ndigits), false};
}

PyNumber python_mean(const std::vector<PyNumber>& xs) {
  GPS_ASSERT(!xs.empty(), "mean of no values");
  bool all_int = true;
  for (const auto& x : xs) all_int = all_int && x.is_int;
  if (all_int) {
    long double sum = 0;
    int64_t isum = 0;
    for (const auto& x : xs) isum += static_cast<int64_t>(x.value);
    sum = static_cast<long double>(isum);
    const auto n = static_cast<int64_t>(xs.size());
    if (isum % n == 0) return {static_cast<double>(isum / n), true};
    return {static_cast<double>(sum / static_cast<long double>(n)), false};
  }
  // Neumaier-compensated sum: exact to well below the 3 printed decimals (statistics.mean is the
  // correctly rounded exact mean; this may differ in the last bit).
  double sum = 0.0, comp = 0.0;
  for (const auto& x : xs) {
    const double t = sum + x.value;
    if (std::fabs(sum) >= std::fabs(x.value)) {
      comp += (sum - t) + x.value;
    } else {
      comp += (x.value - t) + sum;
    }
    sum = t;
  }
  return {(sum + comp) / static_cast<double>(xs.size()), false};
}

std::string pandas_cell(const PyNumber& x) {
  char buf[512];
  if (x.is_int) {
    std::snprintf(buf, sizeof buf, "%.0f", x.value);
    return buf;
  }
  const double v = x.value;
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::snprintf(buf, sizeof buf, "%.6f", v);
  std::string s = buf;
  // _trim_zeros_float: strip trailing zeros, keep one digit after the point.
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s += '0';
  const double a = std::fabs(v);
  const bool too_long = s.size() > 12;  // digits + 6
  if ((a > 0 && a < 1e-6) || (too_long && a > 1e6)) {
    std::snprintf(buf, sizeof buf, "%.6e", v);
    return buf;
  }
  return s;
}

}  // namespace gpstream::eval
