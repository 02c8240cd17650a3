// safetensors reader and writer: hostile files built byte by byte (one test per defect, each expecting
// a clear error that names the file and tensor), sharded directories, and a writer round trip checked
// against a hand parse of the bytes it wrote.
#include "io/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "../testing/fifo.h"
#include "../testing/temp_dir.h"

namespace gpstream::io {
namespace {

using testing::f32_bytes;
using testing::safetensors_bytes;
using testing::TempDir;
using testing::write_bytes;

// Reads `bytes` as a safetensors file and returns the error (the test fails if it loads).
Error read_error(const TempDir& dir, const std::string& bytes, TensorMap* into = nullptr) {
  const std::string path = dir.file("bad.safetensors");
  write_bytes(path, bytes);
  TensorMap local;
  Status s = read_safetensors(path, into ? *into : local);
  EXPECT_FALSE(s.ok()) << "the file was accepted";
  if (s.ok()) return Error(ErrorCode::Internal, "<accepted>");
  // Every message says where: the file.
  EXPECT_NE(s.error().message().find(path), std::string::npos) << s.error().message();
  return s.error();
}

void expect_mentions(const Error& e, const std::string& what) {
  EXPECT_NE(e.message().find(what), std::string::npos) << "message lacks '" << what << "': " << e.message();
}

const std::string kTwoFloats = f32_bytes({1.5f, -2.0f});

TEST(SafetensorsRead, ReadsAHandBuiltFile) {
  TempDir dir;
  // a: F32 [2] = {1.5, -2}; b: F16 [2] = {1.0 (0x3c00), -0.5 (0xb800)}; c: BF16 [1] = 3.140625 (0x4049).
  const std::string data = kTwoFloats + std::string("\x00\x3c\x00\xb8", 4) + std::string("\x49\x40", 2);
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"F16","shape":[1,2],"data_offsets":[8,12]},"c":{"dtype":"BF16","shape":[1],"data_offsets":[12,14]}})";
  write_bytes(dir.file("m.safetensors"), safetensors_bytes(header, data));
  TensorMap map;
  ASSERT_TRUE(read_safetensors(dir.file("m.safetensors"), map).ok());
  ASSERT_EQ(map.tensors.size(), 3u);
  EXPECT_EQ(map.metadata.at("format"), "pt");
  const TensorData* a = map.find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dtype, DType::F32);
  EXPECT_EQ(tensor_to_f32(*a), (std::vector<float>{1.5f, -2.0f}));
  const TensorData* b = map.find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(tensor_to_f32(*b), (std::vector<float>{1.0f, -0.5f}));
  EXPECT_EQ(tensor_to_f32(*map.find("c")), (std::vector<float>{3.140625f}));
  // The header above is 197 bytes, so "a" starts at file offset 205, misaligned in the mapping: the
  // reader must hand out an aligned copy.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a->bytes.data()) % 4, 0u);
}

TEST(SafetensorsRead, FileShorterThanTheLengthPrefix) {
  TempDir dir;
  Error e = read_error(dir, std::string("\x10\x00\x00", 3));
  expect_mentions(e, "too short");
}

TEST(SafetensorsRead, TruncatedData) {
  TempDir dir;
  // The header promises 8 bytes of "w"; the file was cut after 5.
  const std::string header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  Error e = read_error(dir, safetensors_bytes(header, kTwoFloats.substr(0, 5)));
  expect_mentions(e, "tensor w");
  expect_mentions(e, "past the end");
}

TEST(SafetensorsRead, HeaderLengthPastEndOfFile) {
  TempDir dir;
  const std::string header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  Error e = read_error(dir, safetensors_bytes(header, kTwoFloats, header.size() + 9));
  expect_mentions(e, "header length");
  expect_mentions(e, "past the end of the file");
}

TEST(SafetensorsRead, HugeHeaderLengthIsRefusedBeforeReading) {
  TempDir dir;
  Error e = read_error(dir, safetensors_bytes("{}", "", uint64_t{1} << 62));
  expect_mentions(e, "header length");
}

TEST(SafetensorsRead, OffsetsOutOfRange) {
  TempDir dir;
  const std::string header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})";
  Error e = read_error(dir, safetensors_bytes(header, kTwoFloats));
  expect_mentions(e, "tensor w");
  expect_mentions(e, "data_offsets end 16");
}

TEST(SafetensorsRead, OffsetsNearUint64MaxDoNotWrap) {
  TempDir dir;
  const std::string header =
      R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[18446744073709551612,18446744073709551615]}})";
  Error e = read_error(dir, safetensors_bytes(header, kTwoFloats));
  expect_mentions(e, "tensor w");
  expect_mentions(e, "data_offsets end 18446744073709551615 is past the end");
}

TEST(SafetensorsRead, NegativeOffset) {
  TempDir dir;
  const std::string header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[-8,0]}})";
  Error e = read_error(dir, safetensors_bytes(header, kTwoFloats));
  expect_mentions(e, "tensor w");
  expect_mentions(e, "negative");
}

TEST(SafetensorsRead, OverlappingOffsets) {
  TempDir dir;
  const std::string header =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  Error e = read_error(dir, safetensors_bytes(header, kTwoFloats));
  expect_mentions(e, "overlap");
  expect_mentions(e, "a");
  expect_mentions(e, "b");
}

TEST(SafetensorsRead, BeginAfterEnd) {
  TempDir dir;
  const std::string header = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})";
  Error e = read_error(dir, safetensors_bytes(header, kTwoFloats));
  expect_mentions(e, "tensor w");
  expect_mentions(e, "begin 8 > end 4");
}

TEST(SafetensorsRead, ByteCountDoesNotMatchShape) {
  TempDir dir;
  // shape [3] of F32 needs 12 bytes; the offsets give 8.
  const std::string header = R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})";
  Error e = read_error(dir, safetensors_bytes(header, kTwoFloats));
  expect_mentions(e, "tensor w");
  expect_mentions(e, "[3]");
  expect_mentions(e, "expected 12");
}

TEST(SafetensorsRead, ShapeProductOverflowIsCaught) {
  TempDir dir;
  const std::string header =
      R"({"w":{"dtype":"F32","shape":[1099511627776,1099511627776,1099511627776],"data_offsets":[0,8]}})";
  Error e = read_error(dir, safetensors_bytes(header, kTwoFloats));
  expect_mentions(e, "tensor w");
}

TEST(SafetensorsRead, UnknownDtypeNamesTheTensor) {
  TempDir dir;
  const std::string header = R"({"ids":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})";
  Error e = read_error(dir, safetensors_bytes(header, kTwoFloats));
  EXPECT_EQ(e.code(), ErrorCode::Unsupported);
  expect_mentions(e, "tensor ids");
  expect_mentions(e, "I64");
}

TEST(SafetensorsRead, HeaderIsNotJson) {
  TempDir dir;
  Error e = read_error(dir, safetensors_bytes(R"({"w":{"dtype":"F32",)", kTwoFloats));
  expect_mentions(e, "not valid JSON");
}

TEST(SafetensorsRead, HeaderIsJsonButNotAnObject) {
  TempDir dir;
  Error e = read_error(dir, safetensors_bytes("[1,2,3]", kTwoFloats));
  expect_mentions(e, "not a JSON object");
}

TEST(SafetensorsRead, WrongTypedEntryFields) {
  TempDir dir;
  expect_mentions(
      read_error(dir, safetensors_bytes(R"({"w":{"dtype":7,"shape":[2],"data_offsets":[0,8]}})", kTwoFloats)),
      "tensor w: missing dtype");
  expect_mentions(
      read_error(
          dir, safetensors_bytes(R"({"w":{"dtype":"F32","shape":["2"],"data_offsets":[0,8]}})", kTwoFloats)),
      "tensor w: shape");
  expect_mentions(read_error(dir, safetensors_bytes(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0]}})",
                                                    kTwoFloats)),
                  "tensor w: data_offsets");
  expect_mentions(
      read_error(
          dir, safetensors_bytes(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8.5]}})", kTwoFloats)),
      "tensor w: data_offsets");
  expect_mentions(read_error(dir, safetensors_bytes(R"({"w":[1]})", kTwoFloats)), "tensor w");
  expect_mentions(read_error(dir, safetensors_bytes(R"({"__metadata__":{"format":1}})", kTwoFloats)),
                  "__metadata__");
}

TEST(SafetensorsRead, AFailedReadLeavesTheMapUntouched) {
  TempDir dir;
  TensorMap map;
  map.add_f32("kept", {1}, {4.0f});
  // "a" is valid and parsed first; "b" overlaps it, so the file fails after "a" was seen. No view into
  // the (now unmapped) file may remain in the map.
  const std::string header =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  (void)read_error(dir, safetensors_bytes(header, kTwoFloats), &map);
  EXPECT_EQ(map.tensors.size(), 1u);
  EXPECT_EQ(map.find("a"), nullptr);
  EXPECT_EQ(tensor_to_f32(*map.find("kept")), std::vector<float>{4.0f});
}

// --- sharded directories -------------------------------------------------------------------------

void write_shard(const std::string& path, const std::string& name, const std::vector<float>& v) {
  const std::string header = R"({")" + name + R"(":{"dtype":"F32","shape":[)" + std::to_string(v.size()) +
                             R"(],"data_offsets":[0,)" + std::to_string(4 * v.size()) + "]}}";
  write_bytes(path, safetensors_bytes(header, f32_bytes(v)));
}

TEST(SafetensorsDir, ReadsShardsListedByTheIndex) {
  TempDir dir;
  write_shard(dir.file("model-00001-of-00002.safetensors"), "x", {1.0f, 2.0f});
  write_shard(dir.file("model-00002-of-00002.safetensors"), "y", {3.0f});
  // A stray file the index does not list must not be read.
  write_shard(dir.file("stray.safetensors"), "z", {9.0f});
  write_bytes(dir.file("model.safetensors.index.json"),
              R"({"metadata":{"total_size":12},"weight_map":{"x":"model-00001-of-00002.safetensors",)"
              R"("y":"model-00002-of-00002.safetensors"}})");
  Result<TensorMap> map = read_safetensors_dir(dir.path());
  ASSERT_TRUE(map.ok()) << map.error().message();
  EXPECT_EQ(map->tensors.size(), 2u);
  EXPECT_EQ(tensor_to_f32(*map->find("x")), (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(tensor_to_f32(*map->find("y")), (std::vector<float>{3.0f}));
  EXPECT_EQ(map->find("z"), nullptr);
}

TEST(SafetensorsDir, ShardNameLeavingTheDirectoryIsRefused) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("model"));
  write_shard(dir.file("outside.safetensors"), "x", {1.0f});
  for (const std::string shard : {"../outside.safetensors", "/etc/passwd", "sub/../../outside.safetensors"}) {
    write_bytes(dir.file("model/model.safetensors.index.json"), R"({"weight_map":{"x":")" + shard + R"("}})");
    Result<TensorMap> map = read_safetensors_dir(dir.file("model"));
    ASSERT_FALSE(map.ok()) << shard;
    expect_mentions(map.error(), "shard name");
    expect_mentions(map.error(), shard);
  }
}

TEST(SafetensorsDir, IndexNamingATensorItsShardLacks) {
  TempDir dir;
  write_shard(dir.file("a.safetensors"), "x", {1.0f});
  write_bytes(dir.file("model.safetensors.index.json"),
              R"({"weight_map":{"x":"a.safetensors","w":"a.safetensors"}})");
  Result<TensorMap> map = read_safetensors_dir(dir.path());
  ASSERT_FALSE(map.ok());
  expect_mentions(map.error(), "tensor w");
}

TEST(SafetensorsDir, TensorInTwoShardsIsRefused) {
  TempDir dir;
  write_shard(dir.file("a.safetensors"), "x", {1.0f});
  write_shard(dir.file("b.safetensors"), "x", {2.0f});
  write_bytes(dir.file("model.safetensors.index.json"),
              R"({"weight_map":{"x":"a.safetensors","y":"b.safetensors"}})");
  Result<TensorMap> map = read_safetensors_dir(dir.path());
  ASSERT_FALSE(map.ok());
  expect_mentions(map.error(), "tensor x");
  expect_mentions(map.error(), "defined twice");
}

TEST(SafetensorsDir, MalformedIndex) {
  TempDir dir;
  write_bytes(dir.file("model.safetensors.index.json"), R"({"weight_map":["a.safetensors"]})");
  Result<TensorMap> map = read_safetensors_dir(dir.path());
  ASSERT_FALSE(map.ok());
  expect_mentions(map.error(),
                  "model.safetensors.index.json: field 'weight_map' must be an object, got array");
  write_bytes(dir.file("model.safetensors.index.json"), R"({"metadata":{},"weight_map":{"x":7}})");
  map = read_safetensors_dir(dir.path());
  ASSERT_FALSE(map.ok());
  expect_mentions(map.error(),
                  "model.safetensors.index.json: field 'weight_map.x' must be a string, got number");
  write_bytes(dir.file("model.safetensors.index.json"), "{not json");
  map = read_safetensors_dir(dir.path());
  ASSERT_FALSE(map.ok());
  expect_mentions(map.error(), "model.safetensors.index.json");
}

TEST(SafetensorsDir, MissingShardFile) {
  TempDir dir;
  write_bytes(dir.file("model.safetensors.index.json"), R"({"weight_map":{"x":"gone.safetensors"}})");
  Result<TensorMap> map = read_safetensors_dir(dir.path());
  ASSERT_FALSE(map.ok());
  expect_mentions(map.error(), "gone.safetensors");
}

TEST(SafetensorsDir, EmptyDirectory) {
  TempDir dir;
  Result<TensorMap> map = read_safetensors_dir(dir.path());
  ASSERT_FALSE(map.ok());
  EXPECT_EQ(map.error().code(), ErrorCode::NotFound);
}

// A FIFO named model.safetensors (or model.safetensors.index.json) hung the load in open(), waiting for a
// writer; it is refused at once with an error naming it. (Should it block, load_without_hanging unblocks it
// and the test fails.)
TEST(SafetensorsDir, FifoInPlaceOfAFileIsRefusedWithoutBlocking) {
  for (const char* name : {"model.safetensors", "model.safetensors.index.json"}) {
    TempDir dir;
    const std::string fifo = dir.file(name);
    ASSERT_TRUE(testing::make_fifo(fifo));
    const auto load = testing::load_without_hanging(fifo, [&] { return read_safetensors_dir(dir.path()); });
    EXPECT_FALSE(load.hung) << name << ": the load blocked on a FIFO";
    EXPECT_FALSE(load.ok) << name;
    EXPECT_NE(load.message.find(fifo + ": not a regular file (a FIFO)"), std::string::npos) << load.message;
  }
}

// --- writer --------------------------------------------------------------------------------------

TensorData view(DType dtype, std::vector<int64_t> shape, const std::string& bytes) {
  TensorData t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.bytes = std::span<const std::byte>(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
  return t;
}

TEST(SafetensorsWrite, RoundTripsF32F16Bf16AndIsAligned) {
  TempDir dir;
  const std::string m = f32_bytes({0.25f, -1.0f, 3.0f, 1e-3f, 7.0f, -0.0f});
  const std::string h = std::string("\x00\x3c\x00\xc0\xff\x7b", 6);  // F16 1, -2, 65504
  const std::string b = std::string("\x80\x3f\x49\x40", 4);          // BF16 1, 3.140625
  const std::string tail = f32_bytes({42.0f});                       // F32 after 10 bytes of 16-bit data
  std::vector<TensorToWrite> tensors = {{"m", view(DType::F32, {2, 3}, m)},
                                        {"h", view(DType::F16, {3}, h)},
                                        {"b", view(DType::BF16, {2, 1}, b)},
                                        {"tail", view(DType::F32, {1}, tail)}};
  const std::string path = dir.file("out.safetensors");
  ASSERT_TRUE(write_safetensors(path, tensors, {{"format", "pt"}}).ok());

  // Hand parse of the file: 8-byte length, JSON padded so the data starts 8-aligned, contiguous offsets.
  const std::string raw = testing::read_bytes(path);
  ASSERT_GE(raw.size(), 8u);
  uint64_t n = 0;
  std::memcpy(&n, raw.data(), 8);
  EXPECT_EQ((8 + n) % 8, 0u);
  ASSERT_EQ(raw.size(), 8 + n + m.size() + h.size() + b.size() + tail.size());
  auto header = nlohmann::json::parse(raw.substr(8, n));
  EXPECT_EQ(header["__metadata__"]["format"], "pt");
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    const auto& e = header[t.name];
    EXPECT_EQ(e["dtype"], dtype_name(t.data.dtype)) << t.name;
    EXPECT_EQ(e["shape"].get<std::vector<int64_t>>(), t.data.shape) << t.name;
    EXPECT_EQ(e["data_offsets"][0].get<uint64_t>(), offset) << t.name;
    offset += t.data.bytes.size();
    EXPECT_EQ(e["data_offsets"][1].get<uint64_t>(), offset) << t.name;
  }
  EXPECT_EQ(raw.substr(8 + n), m + h + b + tail);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp." + std::to_string(::getpid())));

  TensorMap back;
  ASSERT_TRUE(read_safetensors(path, back).ok());
  EXPECT_EQ(tensor_to_f32(*back.find("m")), (std::vector<float>{0.25f, -1.0f, 3.0f, 1e-3f, 7.0f, -0.0f}));
  EXPECT_EQ(tensor_to_f32(*back.find("h")), (std::vector<float>{1.0f, -2.0f, 65504.0f}));
  EXPECT_EQ(tensor_to_f32(*back.find("b")), (std::vector<float>{1.0f, 3.140625f}));
  EXPECT_EQ(tensor_to_f32(*back.find("tail")), std::vector<float>{42.0f});
  for (const auto& [name, t] : back.tensors)
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.bytes.data()) % dtype_size(t.dtype), 0u) << name;
  EXPECT_EQ(back.find("b")->shape, (std::vector<int64_t>{2, 1}));
}

TEST(SafetensorsWrite, EmptyFileHasAnObjectHeader) {
  TempDir dir;
  const std::string path = dir.file("empty.safetensors");
  ASSERT_TRUE(write_safetensors(path, {}).ok());
  TensorMap back;
  ASSERT_TRUE(read_safetensors(path, back).ok());
  EXPECT_TRUE(back.tensors.empty());
}

TEST(SafetensorsWrite, UnwritableDirectoryIsAnError) {
  TempDir dir;
  Status s = write_safetensors(dir.file("no/such/dir/x.safetensors"), {});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), ErrorCode::Io);
}

}  // namespace
}  // namespace gpstream::io
