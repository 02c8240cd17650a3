// Rendering an SVG with rsvg-convert (Debian package librsvg2-bin) for the slow plot tests, and reading the
// PNG it writes: a small PNG reader (8-bit RGBA, not interlaced — what rsvg-convert writes) with its own
// inflate, checked by zlib's Adler-32, so the tests need no image library. render_padded draws the SVG inside
// a transparent margin, so whatever leaves the canvas shows up as pixels in the margin.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace gpstream::testing {

struct RgbaImage {
  int width = 0, height = 0;
  std::vector<uint8_t> rgba;  // row-major, 4 bytes a pixel
  uint8_t alpha(int x, int y) const { return rgba[(static_cast<size_t>(y) * width + x) * 4 + 3]; }
};

// DEFLATE (RFC 1951): stored, fixed-Huffman and dynamic-Huffman blocks.
class Inflater {
 public:
  explicit Inflater(std::string_view in) : in_(in) {}
  // Decodes from bit 0 of the input; false on malformed input. end_byte: the first byte after the stream.
  bool run(std::vector<uint8_t>& out, size_t* end_byte) {
    bool last = false;
    while (!last && !bad_) {
      last = bit();
      const uint32_t type = bits(2);
      if (type == 0) {
        pos_ = (pos_ + 7) & ~size_t{7};
        const uint32_t len = bits(16), nlen = bits(16);
        if ((len ^ 0xFFFF) != nlen || pos_ / 8 + len > in_.size()) return false;
        for (uint32_t i = 0; i < len; ++i) out.push_back(static_cast<uint8_t>(in_[pos_ / 8 + i]));
        pos_ += 8 * size_t{len};
      } else if (type == 1) {
        std::array<uint8_t, 288> lit{};
        for (int i = 0; i < 288; ++i) lit[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8;
        std::array<uint8_t, 30> dist{};
        dist.fill(5);
        if (!codes(build(lit.data(), 288), build(dist.data(), 30), out)) return false;
      } else if (type == 2) {
        if (!dynamic(out)) return false;
      } else {
        return false;
      }
    }
    *end_byte = (pos_ + 7) / 8;
    return !bad_;
  }

 private:
  struct Huffman {
    std::array<uint16_t, 16> count{};  // codes of each length
    std::vector<uint16_t> symbol;      // symbols ordered by (code length, symbol value)
  };

  int bit() {
    if (pos_ >= in_.size() * 8) {
      bad_ = true;
      return 0;
    }
    const int b = (static_cast<uint8_t>(in_[pos_ / 8]) >> (pos_ % 8)) & 1;
    ++pos_;
    return b;
  }
  uint32_t bits(int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint32_t>(bit()) << i;
    return v;
  }

  static Huffman build(const uint8_t* lengths, int n) {
    Huffman h;
    for (int i = 0; i < n; ++i) ++h.count[lengths[i]];
    h.count[0] = 0;
    for (int len = 1; len < 16; ++len)
      for (int i = 0; i < n; ++i)
        if (lengths[i] == len) h.symbol.push_back(static_cast<uint16_t>(i));
    return h;
  }

  // Canonical codes: the codes of one length are consecutive, starting at (first code of the previous
  // length + its count) × 2, and Huffman codes are read most significant bit first.
  int decode(const Huffman& h) {
    int code = 0, first = 0, index = 0;
    for (int len = 1; len < 16; ++len) {
      code |= bit();
      const int count = h.count[len];
      if (code - first < count) return h.symbol[index + code - first];
      index += count;
      first = (first + count) << 1;
      code <<= 1;
      if (bad_) return -1;
    }
    bad_ = true;
    return -1;
  }

  bool codes(const Huffman& lit, const Huffman& dist, std::vector<uint8_t>& out) {
    static constexpr uint16_t kLenBase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                              31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
    static constexpr uint8_t kLenExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                              2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    static constexpr uint16_t kDistBase[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                               33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                               1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
    static constexpr uint8_t kDistExtra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                               6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
    for (;;) {
      const int sym = decode(lit);
      if (sym < 0) return false;
      if (sym < 256) {
        out.push_back(static_cast<uint8_t>(sym));
      } else if (sym == 256) {
        return true;
      } else {
        if (sym - 257 >= 29) return false;
        const size_t len = kLenBase[sym - 257] + bits(kLenExtra[sym - 257]);
        const int ds = decode(dist);
        if (ds < 0 || ds >= 30) return false;
        const size_t d = kDistBase[ds] + bits(kDistExtra[ds]);
        if (d > out.size() || bad_) return false;
        for (size_t i = 0; i < len; ++i) out.push_back(out[out.size() - d]);
      }
    }
  }

  bool dynamic(std::vector<uint8_t>& out) {
    static constexpr uint8_t kOrder[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    const int hlit = static_cast<int>(bits(5)) + 257, hdist = static_cast<int>(bits(5)) + 1,
              hclen = static_cast<int>(bits(4)) + 4;
    std::array<uint8_t, 19> cl{};
    for (int i = 0; i < hclen; ++i) cl[kOrder[i]] = static_cast<uint8_t>(bits(3));
    const Huffman clh = build(cl.data(), 19);
    std::vector<uint8_t> lengths;
    while (static_cast<int>(lengths.size()) < hlit + hdist) {
      const int sym = decode(clh);
      if (sym < 0) return false;
      if (sym < 16) {
        lengths.push_back(static_cast<uint8_t>(sym));
      } else {
        if (sym == 16 && lengths.empty()) return false;
        const uint8_t v = sym == 16 ? lengths.back() : 0;
        const uint32_t rep = sym == 16 ? 3 + bits(2) : sym == 17 ? 3 + bits(3) : 11 + bits(7);
        for (uint32_t i = 0; i < rep; ++i) lengths.push_back(v);
      }
    }
    if (static_cast<int>(lengths.size()) != hlit + hdist) return false;
    return codes(build(lengths.data(), hlit), build(lengths.data() + hlit, hdist), out);
  }

  std::string_view in_;
  size_t pos_ = 0;  // in bits
  bool bad_ = false;
};

inline uint32_t be32(const std::string& s, size_t at) {
  return (uint32_t{static_cast<uint8_t>(s[at])} << 24) | (uint32_t{static_cast<uint8_t>(s[at + 1])} << 16) |
         (uint32_t{static_cast<uint8_t>(s[at + 2])} << 8) | uint32_t{static_cast<uint8_t>(s[at + 3])};
}

// An 8-bit RGBA, non-interlaced PNG; std::nullopt (with *error) otherwise or when malformed.
inline std::optional<RgbaImage> read_png_rgba(const std::string& path, std::string* error) {
  std::ifstream f(path, std::ios::binary);
  const std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (s.size() < 8 || s.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0)
    return *error = path + ": not a PNG", std::nullopt;
  RgbaImage img;
  std::string idat;
  for (size_t at = 8; at + 12 <= s.size();) {
    const uint32_t len = be32(s, at);
    const std::string type = s.substr(at + 4, 4);
    if (at + 12 + len > s.size()) return *error = path + ": truncated chunk", std::nullopt;
    if (type == "IHDR") {
      img.width = static_cast<int>(be32(s, at + 8));
      img.height = static_cast<int>(be32(s, at + 12));
      const int depth = static_cast<uint8_t>(s[at + 16]), color = static_cast<uint8_t>(s[at + 17]);
      if (depth != 8 || color != 6 || s[at + 20] != 0)
        return *error = path + ": not 8-bit RGBA without interlacing", std::nullopt;
    } else if (type == "IDAT") {
      idat += s.substr(at + 8, len);
    } else if (type == "IEND") {
      break;
    }
    at += 12 + len;
  }
  // zlib (RFC 1950): CMF FLG, deflate, Adler-32 of the output (big-endian).
  if (idat.size() < 6 || (static_cast<uint8_t>(idat[0]) & 0x0F) != 8 ||
      (static_cast<uint8_t>(idat[1]) & 0x20) ||
      ((static_cast<uint8_t>(idat[0]) << 8) | static_cast<uint8_t>(idat[1])) % 31 != 0)
    return *error = path + ": bad zlib header", std::nullopt;
  std::vector<uint8_t> raw;
  size_t end = 0;
  Inflater inf(std::string_view(idat).substr(2));
  if (!inf.run(raw, &end) || 2 + end + 4 > idat.size())
    return *error = path + ": bad deflate data", std::nullopt;
  uint32_t a = 1, b = 0;
  for (uint8_t c : raw) a = (a + c) % 65521, b = (b + a) % 65521;
  if (((b << 16) | a) != be32(idat, 2 + end)) return *error = path + ": Adler-32 mismatch", std::nullopt;
  // Undo the per-row filters (none, sub, up, average, Paeth) with 4 bytes a pixel.
  const size_t stride = static_cast<size_t>(img.width) * 4;
  if (raw.size() != (stride + 1) * static_cast<size_t>(img.height))
    return *error = path + ": image data of the wrong size", std::nullopt;
  img.rgba.assign(stride * static_cast<size_t>(img.height), 0);
  for (int y = 0; y < img.height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* in = &raw[y * (stride + 1) + 1];
    uint8_t* row = &img.rgba[y * stride];
    const uint8_t* up = y > 0 ? &img.rgba[(y - 1) * stride] : nullptr;
    for (size_t i = 0; i < stride; ++i) {
      const int left = i >= 4 ? row[i - 4] : 0, above = up ? up[i] : 0, diag = up && i >= 4 ? up[i - 4] : 0;
      int pred = 0;
      if (filter == 1) pred = left;
      if (filter == 2) pred = above;
      if (filter == 3) pred = (left + above) / 2;
      if (filter == 4) {
        const int p = left + above - diag, pa = std::abs(p - left), pb = std::abs(p - above),
                  pc = std::abs(p - diag);
        pred = pa <= pb && pa <= pc ? left : pb <= pc ? above : diag;
      }
      if (filter > 4) return *error = path + ": unknown PNG filter", std::nullopt;
      row[i] = static_cast<uint8_t>(in[i] + pred);
    }
  }
  return img;
}

inline bool have_rsvg_convert() {
  return std::system("command -v rsvg-convert >/dev/null 2>&1") == 0;
}

// Renders svg_path to png_path; the exit status of rsvg-convert.
inline int rsvg_convert(const std::string& svg_path, const std::string& png_path) {
  return std::system(("rsvg-convert -o '" + png_path + "' '" + svg_path + "'").c_str());
}

// The SVG drawn at (margin, margin) on a transparent canvas `margin` px larger on every side, its root's
// font attributes kept, as a new SVG text.
inline std::string padded_svg(const std::string& svg, int margin, double* width, double* height) {
  const size_t open = svg.find("<svg"), close = svg.find('>', open), end = svg.rfind("</svg>");
  const std::string root = svg.substr(open, close - open);
  auto attr = [&](const char* name) {
    std::smatch m;
    return std::regex_search(root, m, std::regex(std::string("\\s") + name + "=\"([^\"]*)\"")) ? m[1].str()
                                                                                               : "";
  };
  *width = std::stod(attr("width"));
  *height = std::stod(attr("height"));
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(*width + 2 * margin) +
         "\" height=\"" + std::to_string(*height + 2 * margin) + "\"><g transform=\"translate(" +
         std::to_string(margin) + "," + std::to_string(margin) + ")\" font-family=\"" + attr("font-family") +
         "\" font-size=\"" + attr("font-size") + "\">" + svg.substr(close + 1, end - close - 1) +
         "</g></svg>\n";
}

}  // namespace gpstream::testing
