// GGUF reader and writer: files built byte by byte (a builder independent of the writer), one test per
// defect of a hostile file, each expecting a clear error naming the field; every truncation and random byte
// corruption of a valid file rejected or read without crashing (run under ASan/UBSan); and a writer round
// trip of every value type and tensor dtype, checked against a hand parse of the header it wrote.
#include "io/gguf.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "../testing/fifo.h"
#include "../testing/temp_dir.h"

namespace gpstream::io {
namespace {

using testing::TempDir;
using testing::write_bytes;

// Little-endian GGUF bytes, written by hand.
struct Builder {
  std::string b;
  Builder& u8(uint8_t v) {
    b.push_back(static_cast<char>(v));
    return *this;
  }
  Builder& u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) u8(static_cast<uint8_t>(v >> (8 * i)));
    return *this;
  }
  Builder& u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) u8(static_cast<uint8_t>(v >> (8 * i)));
    return *this;
  }
  Builder& f32(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u32(u);
  }
  Builder& str(const std::string& s) {
    u64(s.size());
    b += s;
    return *this;
  }
  Builder& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    b += "GGUF";
    return u32(version).u64(n_tensors).u64(n_kv);
  }
  Builder& kv_u32(const std::string& k, uint32_t v) { return str(k).u32(4).u32(v); }
  Builder& kv_str(const std::string& k, const std::string& v) { return str(k).u32(8).str(v); }
  // Tensor info: dims innermost first.
  Builder& tensor(const std::string& name, std::vector<uint64_t> dims, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(dims.size()));
    for (uint64_t d : dims) u64(d);
    return u32(type).u64(offset);
  }
  Builder& pad(size_t alignment = 32) {
    while (b.size() % alignment) b.push_back('\0');
    return *this;
  }
};

// A valid file: two metadata keys, an F32 [2, 3] tensor "a" and a Q8_0 [1, 32] tensor "q".
std::string valid_file() {
  Builder f;
  f.header(2, 2).kv_str("general.architecture", "llama").kv_u32("llama.block_count", 7);
  f.tensor("a", {3, 2}, 0, 0).tensor("q", {32, 1}, 8, 32);
  f.pad();
  for (int i = 0; i < 6; ++i) f.f32(static_cast<float>(i) + 0.5f);
  f.pad();
  f.u8(0x00).u8(0x3c);  // d = 1.0 in fp16
  for (int i = 0; i < 32; ++i) f.u8(static_cast<uint8_t>(i - 16));
  return f.b;
}

Result<GgufFile> read_bytes_as_gguf(const TempDir& dir, const std::string& bytes) {
  const std::string path = dir.file("t.gguf");
  write_bytes(path, bytes);
  return read_gguf(path);
}

std::string error_of(const std::string& bytes) {
  TempDir dir;
  auto r = read_bytes_as_gguf(dir, bytes);
  EXPECT_FALSE(r.ok()) << "the file was accepted";
  if (r.ok()) return "<accepted>";
  EXPECT_NE(r.error().message().find("t.gguf"), std::string::npos) << r.error().message();
  return r.error().message();
}

TEST(Gguf, ReadsHandBuiltFile) {
  TempDir dir;
  auto g = read_bytes_as_gguf(dir, valid_file());
  ASSERT_TRUE(g.ok()) << g.error().message();
  EXPECT_EQ(g->version, 3u);
  EXPECT_EQ(*g->metadata.get_string("general.architecture"), "llama");
  EXPECT_EQ(*g->metadata.get_int("llama.block_count"), 7);
  EXPECT_FALSE(g->metadata.get_float("llama.block_count").ok());  // wrong type, named
  EXPECT_NE(g->metadata.get_float("llama.block_count").error().message().find("llama.block_count"),
            std::string::npos);
  EXPECT_EQ(g->metadata.get_int("missing", 5).value(), 5);
  const TensorData* a = g->tensors.find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));  // outermost first
  EXPECT_EQ(tensor_get(*a, 4), 4.5f);
  const TensorData* q = g->tensors.find("q");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->dtype, DType::Q8_0);
  EXPECT_EQ(q->shape, (std::vector<int64_t>{1, 32}));
  ASSERT_EQ(q->bytes.size(), 34u);
  EXPECT_EQ(static_cast<int8_t>(q->bytes[2]), -16);
  EXPECT_EQ(g->tensor_order, (std::vector<std::string>{"a", "q"}));
}

TEST(Gguf, VersionTwoAndAlignment) {
  Builder f;
  f.header(1, 1, 2).kv_u32("general.alignment", 64).tensor("a", {2}, 0, 0).pad(64).f32(1).f32(2);
  TempDir dir;
  auto g = read_bytes_as_gguf(dir, f.b);
  ASSERT_TRUE(g.ok()) << g.error().message();
  EXPECT_EQ(g->alignment, 64u);
  EXPECT_EQ(tensor_get(*g->tensors.find("a"), 1), 2.0f);
}

TEST(GgufHostile, BadMagicAndVersion) {
  std::string s = valid_file();
  s[0] = 'X';
  EXPECT_NE(error_of(s).find("magic"), std::string::npos);
  Builder v1;
  v1.header(0, 0, 1);
  EXPECT_NE(error_of(v1.b).find("version 1"), std::string::npos);
  Builder v4;
  v4.header(0, 0, 4);
  EXPECT_NE(error_of(v4.b).find("version 4"), std::string::npos);
}

TEST(GgufHostile, CountsLargerThanTheFile) {
  Builder a;
  a.header(0, uint64_t{1} << 60);
  EXPECT_NE(error_of(a.b).find("kv_count"), std::string::npos);
  Builder b;
  b.header(~uint64_t{0}, 0);
  EXPECT_NE(error_of(b.b).find("tensor_count"), std::string::npos);
}

TEST(GgufHostile, StringAndArrayLengths) {
  Builder a;
  a.header(0, 1).u64(~uint64_t{0});  // key length 2^64 - 1
  a.b += std::string(64, '\0');      // room for the one key-value pair kv_count announces
  EXPECT_NE(error_of(a.b).find("key length"), std::string::npos);
  Builder b;
  b.header(0, 1).str("k").u32(8).u64(1000).u8('x');  // string value of 1000 bytes, 1 present
  EXPECT_NE(error_of(b.b).find("metadata key k"), std::string::npos);
  Builder c;
  c.header(0, 1).str("arr").u32(9).u32(4).u64(uint64_t{1} << 61);  // u32 array, 2^61 elements
  EXPECT_NE(error_of(c.b).find("arr"), std::string::npos);
  Builder d;
  d.header(0, 1).str("arr").u32(9).u32(8).u64(uint64_t{1} << 62);  // string array
  EXPECT_NE(error_of(d.b).find("past the end"), std::string::npos);
}

TEST(GgufHostile, ValueTypes) {
  Builder a;
  a.header(0, 1).str("k").u32(13).u32(0);
  EXPECT_NE(error_of(a.b).find("unknown value type 13"), std::string::npos);
  Builder b;
  b.header(0, 1).str("k").u32(9).u32(9).u64(1);
  EXPECT_NE(error_of(b.b).find("nested arrays"), std::string::npos);
  Builder c;
  c.header(0, 1).str("k").u32(7).u8(2);
  EXPECT_NE(error_of(c.b).find("bool"), std::string::npos);
  Builder d;
  d.header(0, 2).kv_u32("k", 1).kv_u32("k", 2);
  EXPECT_NE(error_of(d.b).find("appears twice"), std::string::npos);
  Builder e;
  e.header(0, 1).str("general.alignment").u32(4).u32(48);
  EXPECT_NE(error_of(e.b).find("general.alignment"), std::string::npos);
  Builder f;
  f.header(0, 1).str("general.alignment").u32(10).u64(32);
  EXPECT_NE(error_of(f.b).find("general.alignment must be u32"), std::string::npos);
}

TEST(GgufHostile, TensorInfos) {
  auto one = [](const std::string& name, std::vector<uint64_t> dims, uint32_t type, uint64_t offset,
                size_t data = 64) {
    Builder f;
    f.header(1, 0).tensor(name, std::move(dims), type, offset).pad();
    f.b += std::string(data, '\0');
    return f.b;
  };
  EXPECT_NE(error_of(one("t", {}, 0, 0)).find("n_dims 0"), std::string::npos);
  EXPECT_NE(error_of(one("t", {1, 1, 1, 1, 1}, 0, 0)).find("n_dims 5"), std::string::npos);
  EXPECT_NE(error_of(one("t", {uint64_t{1} << 41}, 0, 0)).find("too large"), std::string::npos);
  EXPECT_NE(error_of(one("t", {uint64_t{1} << 40, uint64_t{1} << 40}, 0, 0)).find("tensor t"),
            std::string::npos);
  EXPECT_NE(error_of(one("t", {32}, 13, 0)).find("Q5_K (13) is not supported"), std::string::npos);
  EXPECT_NE(error_of(one("t", {32}, 99, 0)).find("unknown type 99"), std::string::npos);
  EXPECT_NE(error_of(one("t", {48}, 8, 0)).find("multiple of 32"), std::string::npos);
  EXPECT_NE(error_of(one("t", {4}, 0, 16)).find("alignment"), std::string::npos);
  EXPECT_NE(error_of(one("t", {32}, 0, 32)).find("past the end of the data"), std::string::npos);
  EXPECT_NE(error_of(one("t", {4}, 0, ~uint64_t{0} / 32 * 32)).find("past the end"), std::string::npos);
  Builder two;
  two.header(2, 0).tensor("x", {16}, 0, 0).tensor("y", {16}, 0, 32).pad();
  two.b += std::string(128, '\0');
  EXPECT_NE(error_of(two.b).find("overlap"), std::string::npos);
  Builder dup;
  dup.header(2, 0).tensor("x", {4}, 0, 0).tensor("x", {4}, 0, 32).pad();
  dup.b += std::string(64, '\0');
  EXPECT_NE(error_of(dup.b).find("defined twice"), std::string::npos);
  Builder nodata;
  nodata.header(1, 0).tensor("x", {4}, 0, 0);  // file ends before the aligned data start
  EXPECT_NE(error_of(nodata.b).find("past the end of the file"), std::string::npos);
}

TEST(GgufHostile, EveryTruncationIsAnError) {
  const std::string s = valid_file();
  TempDir dir;
  for (size_t n = 0; n < s.size(); ++n) {
    auto r = read_bytes_as_gguf(dir, s.substr(0, n));
    EXPECT_FALSE(r.ok()) << "prefix of " << n << " bytes accepted";
  }
}

TEST(GgufHostile, RandomCorruptionNeverCrashes) {
  const std::string s = valid_file();
  TempDir dir;
  std::mt19937 rng(8);
  int rejected = 0;
  for (int trial = 0; trial < 600; ++trial) {
    std::string t = s;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) t[rng() % t.size()] = static_cast<char>(rng() & 0xff);
    auto r = read_bytes_as_gguf(dir, t);
    if (!r.ok()) {
      ++rejected;
      continue;
    }
    for (const auto& [name, td] : r->tensors.tensors) {  // an accepted file's views lie inside it
      ASSERT_EQ(td.bytes.size(), *tensor_nbytes(td.dtype, td.shape)) << name;
    }
  }
  EXPECT_GT(rejected, 30);
}

TEST(Gguf, WriterRoundTripsEveryTypeAndDtype) {
  GgufMetadata m;
  m.set("general.architecture", GgufValue::string("qwen2"));
  m.set("u32", GgufValue::u32(4000000000u));
  m.set("i32", GgufValue::i32(-5));
  m.set("u64", GgufValue::u64(uint64_t{1} << 40));
  m.set("f32", GgufValue::f32(0.25f));
  m.set("bool", GgufValue::boolean(true));
  m.set("strs", GgufValue::string_array({"a", "", "ünï"}));
  m.set("ints", GgufValue::int_array(GgufType::I32, {1, -2, 3}));
  m.set("floats", GgufValue::float_array({0.5, -1.5}));
  m.set("general.alignment", GgufValue::u32(64));
  TensorMap src;
  src.add_f32("f", {2, 3}, {1, 2, 3, 4, 5, 6});
  src.add_raw("h", DType::F16, {2}, std::vector<std::byte>(4, std::byte{0x3c}));
  src.add_raw("q8", DType::Q8_0, {2, 32}, std::vector<std::byte>(68, std::byte{7}));
  src.add_raw("q4", DType::Q4_0, {1, 64}, std::vector<std::byte>(36, std::byte{9}));
  src.add_raw("k4", DType::Q4_K, {1, 256}, std::vector<std::byte>(144, std::byte{1}));
  src.add_raw("k6", DType::Q6_K, {1, 256}, std::vector<std::byte>(210, std::byte{2}));
  std::vector<GgufTensorToWrite> list;
  for (const char* n : {"f", "h", "q8", "q4", "k4", "k6"}) list.push_back({n, *src.find(n)});
  TempDir dir;
  const std::string path = dir.file("rt.gguf");
  ASSERT_TRUE(write_gguf(path, m, list).ok());
  // Hand parse of the start: magic, version 3, 6 tensors, 10 keys, first key.
  const std::string raw = testing::read_bytes(path);
  ASSERT_GT(raw.size(), 60u);
  EXPECT_EQ(raw.substr(0, 4), "GGUF");
  EXPECT_EQ(raw[4], 3);
  EXPECT_EQ(raw[8], 6);
  EXPECT_EQ(raw[16], 10);
  EXPECT_EQ(raw[24], 20);  // strlen("general.architecture")
  EXPECT_EQ(raw.substr(32, 20), "general.architecture");
  EXPECT_EQ(raw.size() % 64, 0u);
  auto g = read_gguf(path);
  ASSERT_TRUE(g.ok()) << g.error().message();
  EXPECT_EQ(g->alignment, 64u);
  EXPECT_EQ(*g->metadata.get_int("u32"), 4000000000);
  EXPECT_EQ(*g->metadata.get_int("i32"), -5);
  EXPECT_EQ(*g->metadata.get_int("u64"), int64_t{1} << 40);
  EXPECT_EQ(*g->metadata.get_float("f32"), 0.25);
  EXPECT_TRUE(*g->metadata.get_bool("bool"));
  EXPECT_EQ(g->metadata.find("strs")->strs, (std::vector<std::string>{"a", "", "ünï"}));
  EXPECT_EQ(g->metadata.find("ints")->ints, (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(g->metadata.find("floats")->floats, (std::vector<double>{0.5, -1.5}));
  for (const auto& t : list) {
    const TensorData* r = g->tensors.find(t.name);
    ASSERT_NE(r, nullptr) << t.name;
    EXPECT_EQ(r->dtype, t.data.dtype) << t.name;
    EXPECT_EQ(r->shape, t.data.shape) << t.name;
    ASSERT_EQ(r->bytes.size(), t.data.bytes.size());
    EXPECT_EQ(std::memcmp(r->bytes.data(), t.data.bytes.data(), r->bytes.size()), 0) << t.name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(r->bytes.data()) % 64, 0u) << t.name;
  }
  EXPECT_EQ(g->tensor_order, (std::vector<std::string>{"f", "h", "q8", "q4", "k4", "k6"}));
}

TEST(Gguf, WriterRefusesInconsistentTensors) {
  TensorMap src;
  src.add_f32("f", {4}, {1, 2, 3, 4});
  TensorData bad = *src.find("f");
  bad.shape = {5};
  TempDir dir;
  EXPECT_FALSE(write_gguf(dir.file("x.gguf"), {}, {{"f", bad}}).ok());
  EXPECT_FALSE(write_gguf(dir.file("x.gguf"), {}, {{"f", *src.find("f")}, {"f", *src.find("f")}}).ok());
}

// A FIFO named like a GGUF file is refused at once, naming it, instead of blocking in open() for a writer.
TEST(GgufHostile, FifoIsRefusedWithoutBlocking) {
  TempDir dir;
  const std::string fifo = dir.file("model.gguf");
  ASSERT_TRUE(testing::make_fifo(fifo));
  const auto load = testing::load_without_hanging(fifo, [&] { return read_gguf(fifo); });
  EXPECT_FALSE(load.hung) << "read_gguf blocked on a FIFO";
  EXPECT_FALSE(load.ok);
  EXPECT_NE(load.message.find(fifo + ": not a regular file (a FIFO)"), std::string::npos) << load.message;
}

}  // namespace
}  // namespace gpstream::io
