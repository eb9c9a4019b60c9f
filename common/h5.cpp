#include "common/h5.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace srbench {

namespace h5_handle {

bool Id::close() {
  if (id_ < 0) return true;
  herr_t r = -1;
  switch (H5Iget_type(id_)) {
    case H5I_FILE: r = H5Fclose(id_); break;
    case H5I_GROUP: r = H5Gclose(id_); break;
    case H5I_DATASET: r = H5Dclose(id_); break;
    case H5I_DATASPACE: r = H5Sclose(id_); break;
    case H5I_DATATYPE: r = H5Tclose(id_); break;
    case H5I_ATTR: r = H5Aclose(id_); break;
    case H5I_GENPROP_LST: r = H5Pclose(id_); break;
    default: r = H5Idec_ref(id_); break;
  }
  id_ = H5I_INVALID_HID;
  return r >= 0;
}

}  // namespace h5_handle

namespace h5 {

namespace {
// The name a file opened from its bytes in memory (open_file) has in HDF5: its path, this and a
// number of its own (HDF5's in-memory driver refuses a name that exists on disk, and takes two
// opens of one name for the same file). Messages show the path alone.
constexpr std::string_view kImageSuffix = " (in memory ";
}  // namespace

void silence_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

std::string where(hid_t loc) {
  std::string file, path;
  if (const ssize_t n = H5Fget_name(loc, nullptr, 0); n > 0) {
    file.resize(static_cast<size_t>(n) + 1);
    H5Fget_name(loc, file.data(), file.size());
    file.resize(static_cast<size_t>(n));
    if (const size_t at = file.rfind(kImageSuffix); at != std::string::npos && file.ends_with(")"))
      file.resize(at);  // opened from memory
  }
  if (const ssize_t n = H5Iget_name(loc, nullptr, 0); n > 0) {
    path.resize(static_cast<size_t>(n) + 1);
    H5Iget_name(loc, path.data(), path.size());
    path.resize(static_cast<size_t>(n));
  }
  return file + ":" + (path.empty() ? "/" : path);
}

std::string where(hid_t loc, const std::string& name) {
  std::string w = where(loc);
  return w + (w.back() == '/' ? "" : "/") + name;
}

std::string shape_text(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace {

[[noreturn]] void fail(hid_t loc, const std::string& name, const std::string& what) {
  throw Error(where(loc, name) + ": " + what);
}

[[noreturn]] void fail_attr(hid_t loc, const std::string& name, const std::string& what) {
  throw Error(where(loc) + " attribute '" + name + "': " + what);
}

// Variable-length UTF-8 strings (file and memory alike).
Id string_type() {
  Id t(H5Tcopy(H5T_C_S1));
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

// Frees the variable-length strings HDF5 allocated while reading into `buf`.
void reclaim(hid_t mem_type, hid_t space, void* buf) {
#if H5_VERSION_GE(1, 12, 0)
  H5Treclaim(mem_type, space, H5P_DEFAULT, buf);
#else
  H5Dvlen_reclaim(mem_type, space, H5P_DEFAULT, buf);
#endif
}

template <typename T>
struct TypeOf;
template <>
struct TypeOf<float> {
  static hid_t file() { return H5T_IEEE_F32LE; }
  static hid_t mem() { return H5T_NATIVE_FLOAT; }
};
template <>
struct TypeOf<double> {
  static hid_t file() { return H5T_IEEE_F64LE; }
  static hid_t mem() { return H5T_NATIVE_DOUBLE; }
};
template <>
struct TypeOf<int32_t> {
  static hid_t file() { return H5T_STD_I32LE; }
  static hid_t mem() { return H5T_NATIVE_INT32; }
};
template <>
struct TypeOf<int64_t> {
  static hid_t file() { return H5T_STD_I64LE; }
  static hid_t mem() { return H5T_NATIVE_INT64; }
};

// The transfer properties of a read or write that converts `count` elements of up to `bytes`
// bytes each (variable-length strings, the compound tables): a conversion buffer just large
// enough, instead of HDF5's default 1 MiB, which it allocates zeroed for every such call (for a
// run file of tens of KiB that was most of the memory its writing touched). Which elements are
// converted, and so the file's contents, are the same either way.
Id conversion_transfer(size_t count, size_t bytes) {
  Id dxpl(H5Pcreate(H5P_DATASET_XFER));
  const size_t size = std::clamp<size_t>(count * bytes, 4096, size_t{1} << 20);
  if (dxpl.valid()) H5Pset_buffer(dxpl, size, nullptr, nullptr);
  return dxpl;
}

void write_raw(hid_t loc, const std::string& name, hid_t file_type, hid_t mem_type, const void* data,
               const Shape& shape) {
  silence_errors();
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  Id space(shape.empty() ? H5Screate(H5S_SCALAR) : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
  Id ds(space.valid() ? H5Dcreate2(loc, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
                      : H5I_INVALID_HID);
  size_t count = 1;
  for (int64_t d : shape) count *= static_cast<size_t>(d);
  // a conversion (file and memory types differ, or variable-length data) gets a buffer to its size
  const bool converts = H5Tequal(file_type, mem_type) <= 0 || H5Tdetect_class(mem_type, H5T_STRING) > 0 ||
                        H5Tdetect_class(mem_type, H5T_VLEN) > 0;
  const size_t width = std::max(H5Tget_size(file_type), H5Tget_size(mem_type)) + 16;
  Id dxpl = converts ? conversion_transfer(count, width) : Id(H5I_INVALID_HID);
  if (!ds.valid() ||
      (count > 0 && H5Dwrite(ds, mem_type, H5S_ALL, H5S_ALL, dxpl.valid() ? hid_t(dxpl) : H5P_DEFAULT, data) < 0))
    throw Error("cannot write dataset " + where(loc, name));
}

void write_scalar_attr(hid_t loc, const std::string& name, hid_t file_type, hid_t mem_type, const void* value) {
  silence_errors();
  Id space(H5Screate(H5S_SCALAR));
  Id attr(H5Acreate2(loc, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT));
  if (!attr.valid() || H5Awrite(attr, mem_type, value) < 0)
    throw Error("cannot write attribute '" + name + "' of " + where(loc));
}

// Opens a scalar attribute of class `cls` (or, with `also`, that class).
Id open_scalar_attr(hid_t loc, const std::string& name, H5T_class_t cls, const char* expected,
                    H5T_class_t also = H5T_NO_CLASS) {
  silence_errors();
  if (H5Aexists(loc, name.c_str()) <= 0) fail_attr(loc, name, std::string("missing (expected ") + expected + ")");
  Id attr(H5Aopen(loc, name.c_str(), H5P_DEFAULT));
  Id space(attr.valid() ? H5Aget_space(attr) : H5I_INVALID_HID);
  Id type(attr.valid() ? H5Aget_type(attr) : H5I_INVALID_HID);
  if (!attr.valid() || !space.valid() || H5Sget_simple_extent_npoints(space) != 1)
    fail_attr(loc, name, std::string("expected a single value (") + expected + ")");
  const H5T_class_t c = H5Tget_class(type);
  if (c != cls && (also == H5T_NO_CLASS || c != also)) fail_attr(loc, name, std::string("expected ") + expected);
  return attr;
}

const char* class_name(DatasetInfo::Class c) {
  switch (c) {
    case DatasetInfo::Integer: return "integer";
    case DatasetInfo::Float: return "float";
    case DatasetInfo::String: return "string";
    case DatasetInfo::Compound: return "compound";
    case DatasetInfo::Other: break;
  }
  return "other";
}

// Opens dataset `name`, checks its class and rank; its element count goes to `count`.
Id open_checked(hid_t loc, const std::string& name, DatasetInfo::Class cls, int rank, Shape* shape, size_t& count) {
  const DatasetInfo info = dataset_info(loc, name);
  if (info.cls != cls) fail(loc, name, std::string("expected ") + class_name(cls) + " values");
  if (rank >= 0 && static_cast<int>(info.shape.size()) != rank)
    fail(loc, name, "expected " + std::to_string(rank) + " dimension(s), got shape " + shape_text(info.shape));
  count = 1;
  for (int64_t d : info.shape) count *= static_cast<size_t>(d);
  if (shape) *shape = info.shape;
  return open_dataset(loc, name);
}

}  // namespace

// ---- files ----------------------------------------------------------------------------------

std::string os_error_text(int error_number) {
  std::string text = std::error_code(error_number, std::generic_category()).message();
  if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z' && !(text.size() > 1 && text[1] >= 'A' && text[1] <= 'Z'))
    text[0] = static_cast<char>(text[0] - 'A' + 'a');  // "No space left on device" → "no space …", not "I/O" → "i/O"
  return text;
}

namespace {

// The checksum user block: its size (HDF5 wants a power of two >= 512) and the header it starts
// with, "srbench-checksum 1 bytes=<bytes after the block> crc32=<8 hex digits>\n", zero-padded.
constexpr size_t kUserBlock = 512;
constexpr char kChecksumMagic[] = "srbench-checksum 1 ";
constexpr unsigned char kHdf5Signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

// The user block of a file whose bytes after the block number `bytes` with CRC-32 `crc`.
std::string checksum_header(unsigned long long bytes, unsigned long long crc) {
  char text[kUserBlock] = {};
  std::snprintf(text, sizeof text, "%sbytes=%llu crc32=%08llx\n", kChecksumMagic, bytes, crc);
  return std::string(text, kUserBlock);
}

// A file descriptor that closes itself (errors of close are checked where they matter).
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void fail_os(const std::string& what) { throw Error(what + ": " + os_error_text(errno)); }

// Reads n bytes of fd from offset `from` into `out`; false (errno set) on a read error or a
// short file.
bool read_exactly(int fd, unsigned char* out, size_t n, off_t from) {
  while (n > 0) {
    const ssize_t got = ::pread(fd, out, n, from);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (got == 0) errno = EIO;
      return false;
    }
    out += got, from += got, n -= static_cast<size_t>(got);
  }
  return true;
}

// CRC-32 of bytes [from, from + n) of fd, read in 1 MiB pieces. -1 (and errno set) on a read error
// or a short file.
int64_t crc_of(int fd, off_t from, uint64_t n) {
  // At most 1 MiB at a time, and no more than the file holds (a run file is tens of KiB: a
  // zero-filled 1 MiB buffer per file read was most of the time a resumed sweep spent opening them).
  const size_t size = static_cast<size_t>(std::min<uint64_t>(std::max<uint64_t>(n, 1), uint64_t{1} << 20));
  const auto buf = std::make_unique_for_overwrite<unsigned char[]>(size);
  uLong crc = crc32(0L, Z_NULL, 0);
  while (n > 0) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(n, size));
    if (!read_exactly(fd, buf.get(), want, from)) return -1;
    crc = crc32(crc, buf.get(), static_cast<uInt>(want));
    from += static_cast<off_t>(want);
    n -= want;
  }
  return static_cast<int64_t>(crc);
}

// Writes all of `bytes` to fd (the file `path`) and flushes it to disk; Error naming the file
// and the operating system's reason otherwise (a network file system may report a full disk or
// quota only at fsync or close).
void write_all(int fd, const std::vector<unsigned char>& bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      fail_os("cannot write " + path);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) fail_os("cannot write " + path + " to disk");
}

// Flushes the folder holding `path` (its new name) to disk; where a folder cannot be synced, the
// rename stands as the file system keeps it.
void flush_folder(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  Fd d{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (d.fd >= 0 && ::fsync(d.fd) != 0 && errno != EINVAL && errno != EROFS) fail_os("cannot write folder " + dir + " to disk");
}

// A file read whole: its bytes, for HDF5 to open from memory.
struct Image {
  std::unique_ptr<unsigned char[]> bytes;
  size_t size = 0;
};

// Files with a checksum up to this size are read once, whole: the checksum is checked on those
// bytes and HDF5 reads them from memory (a run file is tens of KiB; HDF5 reading it from disk
// took a system call for each of its pieces). Larger ones are checked in pieces and read by HDF5.
constexpr uint64_t kImageLimit = uint64_t{64} << 20;

// Checks a file's checksum, if it has one; true if it has. Error "<head>…" when the file is
// truncated, longer than written, or its contents differ from what was written. A checked file
// of at most kImageLimit bytes is left in `image` (else `image` stays empty).
bool verify_checksum(const std::string& path, const std::string& head, Image& image) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) throw Error(head + "cannot be read: " + os_error_text(errno));
  char header[kUserBlock + 1] = {};
  const ssize_t got = ::pread(f.fd, header, kUserBlock, 0);
  if (got < 0) throw Error(head + "cannot be read: " + os_error_text(errno));
  if (static_cast<size_t>(got) < sizeof kChecksumMagic - 1 ||
      std::memcmp(header, kChecksumMagic, sizeof kChecksumMagic - 1) != 0)
    return false;
  unsigned long long bytes = 0, crc = 0;
  if (static_cast<size_t>(got) < kUserBlock ||
      std::sscanf(header + sizeof kChecksumMagic - 1, "bytes=%llu crc32=%llx", &bytes, &crc) != 2 ||
      std::memcmp(header, checksum_header(bytes, crc).data(), kUserBlock) != 0)  // the whole block, padding too
    throw Error(head + "damaged (its checksum header is unreadable)");
  struct stat st{};
  if (::fstat(f.fd, &st) != 0) throw Error(head + "cannot be read: " + os_error_text(errno));
  const uint64_t body = static_cast<uint64_t>(st.st_size) - std::min<uint64_t>(st.st_size, kUserBlock);
  if (body < bytes)
    throw Error(head + "truncated (" + std::to_string(body) + " of the " + std::to_string(bytes) +
                " bytes written after its header; an interrupted copy?)");
  if (body > bytes)
    throw Error(head + "damaged (" + std::to_string(body - bytes) + " bytes more than were written)");
  int64_t actual = -1;
  if (kUserBlock + bytes <= kImageLimit) {
    const size_t size = kUserBlock + static_cast<size_t>(bytes);
    image.bytes = std::make_unique_for_overwrite<unsigned char[]>(size);
    if (!read_exactly(f.fd, image.bytes.get(), size, 0)) throw Error(head + "cannot be read: " + os_error_text(errno));
    actual = static_cast<int64_t>(crc32_z(crc32(0L, Z_NULL, 0), image.bytes.get() + kUserBlock, bytes));
    image.size = size;
  } else {
    actual = crc_of(f.fd, static_cast<off_t>(kUserBlock), bytes);
    if (actual < 0) throw Error(head + "cannot be read: " + os_error_text(errno));
  }
  if (static_cast<unsigned long long>(actual) != crc)
    throw Error(head + "damaged (its contents differ from the checksum written with them: changed or corrupted "
                       "after srbench wrote it)");
  return true;
}

}  // namespace

Id open_file(const std::string& path, const std::string& what, bool writable) {
  silence_errors();
  std::error_code ec;
  const std::string head = what + " " + path + ": ";
  if (!std::filesystem::exists(path, ec)) throw Error(head + "no such file");
  if (std::filesystem::is_directory(path, ec)) throw Error(head + "is a directory, not a file");
  if (!std::filesystem::is_regular_file(path, ec)) throw Error(head + "not a regular file");
  Image image;
  const bool sealed = verify_checksum(path, head, image);
  if (sealed && writable) throw Error(head + "has a checksum; srbench does not change such a file in place");
  if (!sealed) {
    // Without a checksum HDF5's signature must start the file. One after a user block means a
    // file written with a checksum whose header is damaged (srbench writes no other user block).
    Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    unsigned char sig[8] = {}, after_block[8] = {};
    const bool at_start = f.fd >= 0 && ::pread(f.fd, sig, sizeof sig, 0) == static_cast<ssize_t>(sizeof sig) &&
                          std::memcmp(sig, kHdf5Signature, sizeof sig) == 0;
    if (!at_start) {
      const bool after = f.fd >= 0 && ::pread(f.fd, after_block, sizeof after_block, kUserBlock) == 8 &&
                         std::memcmp(after_block, kHdf5Signature, sizeof after_block) == 0;
      throw Error(head + (after ? "damaged (its checksum header is unreadable)" : "not an HDF5 file (empty or damaged?)"));
    }
  }
  if (image.size > 0) {
    // HDF5's in-memory driver, given the bytes (it copies them), under a name that is not on disk
    Id fapl(H5Pcreate(H5P_FILE_ACCESS));
    if (fapl.valid() && H5Pset_fapl_core(fapl, size_t{64} << 10, /*backing_store=*/false) >= 0 &&
        H5Pset_file_image(fapl, image.bytes.get(), image.size) >= 0) {
      static std::atomic<uint64_t> opened{0};
      const std::string name = path + std::string(kImageSuffix) + std::to_string(opened++) + ")";
      Id f(H5Fopen(name.c_str(), H5F_ACC_RDONLY, fapl));
      if (f.valid()) return f;
    }
    // else as any other file, from disk
  }
  Id f(H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!f.valid()) throw Error(head + "cannot be opened as HDF5 (truncated or damaged)");
  return f;
}

void write_file_atomically(const std::string& path, const std::function<void(hid_t file)>& write, Checksum checksum) {
  silence_errors();
  static std::atomic<uint64_t> counter{0};  // two writers in one process never share a name
  const std::string tmp = path + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  // Created first, so that a missing folder, a read-only one or a full disk is reported (as the
  // operating system says it) before any work.
  Fd out{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)};
  if (out.fd < 0) fail_os("cannot create " + tmp);
  try {
    // HDF5 builds the file in memory (its core driver, no backing store) and srbench writes the
    // image: every write to disk is srbench's own, with its error, and a failed write never
    // leaves HDF5 holding a half-closed file.
    // With a checksum, the image (which HDF5 gives without its user block) follows the block.
    const size_t block = checksum == Checksum::Yes ? kUserBlock : 0;
    std::vector<unsigned char> image;
    {
      Id fcpl(H5Pcreate(H5P_FILE_CREATE));
      if (block > 0) H5Pset_userblock(fcpl, block);
      Id fapl(H5Pcreate(H5P_FILE_ACCESS));
      // grown 64 KiB at a time: a run file is tens of KiB (a 4 MiB step cost each run 1,000 page
      // faults of zeroed memory it never used); the image HDF5 gives is the same either way
      H5Pset_fapl_core(fapl, size_t{64} << 10, /*backing_store=*/false);
      H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);  // closing the file closes everything in it
      Id file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, fcpl, fapl));
      if (!file.valid()) throw Error("cannot create " + tmp + " (HDF5 could not start a file in memory)");
      write(file);
      const ssize_t size = H5Fflush(file, H5F_SCOPE_GLOBAL) < 0 ? -1 : H5Fget_file_image(file, nullptr, 0);
      if (size < 0) throw Error("cannot finish writing " + tmp + " (HDF5 could not complete the file)");
      image.resize(block + static_cast<size_t>(size));
      if (size > 0 && H5Fget_file_image(file, image.data() + block, static_cast<size_t>(size)) != size)
        throw Error("cannot finish writing " + tmp + " (HDF5 could not complete the file)");
      if (!file.close()) throw Error("cannot finish writing " + tmp + " (HDF5 could not close it)");
    }
    if (block > 0) {
      const uLong crc = crc32_z(crc32(0L, Z_NULL, 0), image.data() + block, image.size() - block);
      std::memcpy(image.data(), checksum_header(image.size() - block, crc).data(), block);
    }
    write_all(out.fd, image, tmp);
    if (::close(std::exchange(out.fd, -1)) != 0) fail_os("cannot finish writing " + tmp);
    if (::rename(tmp.c_str(), path.c_str()) != 0) fail_os("cannot rename " + tmp + " to " + path);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  flush_folder(path);
}

// ---- groups and links -----------------------------------------------------------------------

bool has_link(hid_t loc, const std::string& name) {
  silence_errors();
  return H5Lexists(loc, name.c_str(), H5P_DEFAULT) > 0;  // < 0 when a parent group is missing
}

bool is_dataset(hid_t loc, const std::string& name) {
  if (!has_link(loc, name)) return false;
  H5O_info_t info;
#if H5_VERSION_GE(1, 12, 0)
  if (H5Oget_info_by_name3(loc, name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return false;
#else
  if (H5Oget_info_by_name2(loc, name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return false;
#endif
  return info.type == H5O_TYPE_DATASET;
}

Id create_group(hid_t loc, const std::string& name) {
  silence_errors();
  Id g(H5Gcreate2(loc, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!g.valid()) throw Error("cannot create group " + where(loc, name) + (has_link(loc, name) ? ": it exists already" : ""));
  return g;
}

Id open_group(hid_t loc, const std::string& name) {
  if (!has_link(loc, name)) fail(loc, name, "missing group");
  Id g(H5Gopen2(loc, name.c_str(), H5P_DEFAULT));
  if (!g.valid()) fail(loc, name, "is not a group (or cannot be opened)");
  return g;
}

Id open_or_create_group(hid_t loc, const std::string& name) {
  return has_link(loc, name) ? open_group(loc, name) : create_group(loc, name);
}

std::vector<std::string> link_names(hid_t group) {
  silence_errors();
  H5G_info_t info;
  if (H5Gget_info(group, &info) < 0) throw Error(where(group) + ": cannot list its contents");
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t n = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (n < 0) throw Error(where(group) + ": cannot list its contents");
    std::string name(static_cast<size_t>(n) + 1, '\0');
    H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT);
    name.resize(static_cast<size_t>(n));
    names.push_back(std::move(name));
  }
  return names;
}

void copy(hid_t src, const std::string& src_name, hid_t dst, const std::string& dst_name) {
  silence_errors();
  if (H5Ocopy(src, src_name.c_str(), dst, dst_name.c_str(), H5P_DEFAULT, H5P_DEFAULT) < 0)
    throw Error("cannot copy " + where(src, src_name) + " into " + where(dst, dst_name));
}

// ---- attributes -----------------------------------------------------------------------------

bool has_attr(hid_t loc, const std::string& name) {
  silence_errors();
  return H5Aexists(loc, name.c_str()) > 0;
}

void write_attr(hid_t loc, const std::string& name, const std::string& value) {
  Id type = string_type();
  const char* text = value.c_str();
  write_scalar_attr(loc, name, type, type, &text);
}
void write_attr(hid_t loc, const std::string& name, const char* value) { write_attr(loc, name, std::string(value)); }
void write_attr(hid_t loc, const std::string& name, int64_t value) {
  write_scalar_attr(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
}
void write_attr(hid_t loc, const std::string& name, double value) {
  write_scalar_attr(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

std::string read_string_attr(hid_t loc, const std::string& name) {
  Id attr = open_scalar_attr(loc, name, H5T_STRING, "a string");
  Id type(H5Aget_type(attr));
  std::string out;
  if (H5Tis_variable_str(type) > 0) {
    Id mem(H5Tcopy(H5T_C_S1));
    H5Tset_size(mem, H5T_VARIABLE);
    H5Tset_cset(mem, H5Tget_cset(type));
    char* text = nullptr;
    if (H5Aread(attr, mem, &text) < 0) fail_attr(loc, name, "cannot be read");
    out = text ? text : "";
    H5free_memory(text);
  } else {
    out.assign(H5Tget_size(type), '\0');
    Id mem(H5Tcopy(type));
    if (H5Aread(attr, mem, out.data()) < 0) fail_attr(loc, name, "cannot be read");
    out.resize(std::min(out.size(), out.find('\0')));
  }
  return out;
}

int64_t read_int_attr(hid_t loc, const std::string& name) {
  Id attr = open_scalar_attr(loc, name, H5T_INTEGER, "an integer");
  int64_t v = 0;
  if (H5Aread(attr, H5T_NATIVE_INT64, &v) < 0) fail_attr(loc, name, "cannot be read");
  return v;
}

double read_double_attr(hid_t loc, const std::string& name) {
  Id attr = open_scalar_attr(loc, name, H5T_FLOAT, "a number", H5T_INTEGER);
  double v = 0;
  if (H5Aread(attr, H5T_NATIVE_DOUBLE, &v) < 0) fail_attr(loc, name, "cannot be read");
  return v;
}

// ---- datasets -------------------------------------------------------------------------------

template <typename T>
void write_array(hid_t loc, const std::string& name, const T* data, const Shape& shape) {
  write_raw(loc, name, TypeOf<T>::file(), TypeOf<T>::mem(), data, shape);
}

void write_strings(hid_t loc, const std::string& name, const std::vector<std::string>& values) {
  std::vector<const char*> ptrs;
  for (const auto& s : values) ptrs.push_back(s.c_str());
  Id type = string_type();
  write_raw(loc, name, type, type, ptrs.data(), {static_cast<int64_t>(values.size())});
}

Id open_dataset(hid_t loc, const std::string& name) {
  silence_errors();
  if (!has_link(loc, name)) fail(loc, name, "missing dataset");
  Id ds(H5Dopen2(loc, name.c_str(), H5P_DEFAULT));
  if (!ds.valid()) fail(loc, name, "is not a dataset (or cannot be opened)");
  return ds;
}

Shape shape_of(hid_t dataset) {
  Id space(H5Dget_space(dataset));
  const int rank = space.valid() ? H5Sget_simple_extent_ndims(space) : -1;
  if (rank < 0) throw Error(where(dataset) + ": cannot read its shape");
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return {dims.begin(), dims.end()};
}

DatasetInfo dataset_info(hid_t loc, const std::string& name) {
  Id ds = open_dataset(loc, name);
  Id type(H5Dget_type(ds));
  if (!type.valid()) fail(loc, name, "cannot read its type (damaged file?)");
  DatasetInfo info;
  switch (H5Tget_class(type)) {
    case H5T_INTEGER: info.cls = DatasetInfo::Integer; break;
    case H5T_FLOAT: info.cls = DatasetInfo::Float; break;
    case H5T_STRING: info.cls = DatasetInfo::String; break;
    case H5T_COMPOUND: info.cls = DatasetInfo::Compound; break;
    default: info.cls = DatasetInfo::Other; break;
  }
  info.bytes = H5Tget_size(type);
  info.shape = shape_of(ds);
  return info;
}

template <typename T>
std::vector<T> read_array(hid_t loc, const std::string& name, int rank, Shape* shape) {
  size_t count = 0;
  const auto cls = std::is_floating_point_v<T> ? DatasetInfo::Float : DatasetInfo::Integer;
  Id ds = open_checked(loc, name, cls, rank, shape, count);
  std::vector<T> v(count);
  if (count > 0 && H5Dread(ds, TypeOf<T>::mem(), H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    fail(loc, name, "cannot be read (damaged file?)");
  return v;
}

template <typename T>
void read_array_into(hid_t loc, const std::string& name, T* out, size_t count) {
  size_t n = 0;
  const auto cls = std::is_floating_point_v<T> ? DatasetInfo::Float : DatasetInfo::Integer;
  Id ds = open_checked(loc, name, cls, -1, nullptr, n);
  if (n != count) fail(loc, name, "holds " + std::to_string(n) + " values, expected " + std::to_string(count));
  if (count > 0 && H5Dread(ds, TypeOf<T>::mem(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
    fail(loc, name, "cannot be read (damaged file?)");
}

std::vector<std::string> read_strings(hid_t loc, const std::string& name) {
  size_t count = 0;
  Id ds = open_checked(loc, name, DatasetInfo::String, 1, nullptr, count);
  Id file_type(H5Dget_type(ds));
  if (H5Tis_variable_str(file_type) <= 0) fail(loc, name, "expected variable-length strings");
  std::vector<char*> ptrs(count, nullptr);
  std::vector<std::string> out;
  if (ptrs.empty()) return out;
  Id mem = string_type();
  Id dxpl = conversion_transfer(count, sizeof(char*) + 16);
  if (H5Dread(ds, mem, H5S_ALL, H5S_ALL, dxpl, ptrs.data()) < 0) fail(loc, name, "cannot be read (damaged file?)");
  for (char* p : ptrs) out.emplace_back(p ? p : "");
  Id space(H5Dget_space(ds));
  reclaim(mem, space, ptrs.data());
  return out;
}

#define SRBENCH_H5_ARRAY(T)                                                                        \
  template void write_array<T>(hid_t, const std::string&, const T*, const Shape&);                \
  template std::vector<T> read_array<T>(hid_t, const std::string&, int, Shape*);                  \
  template void read_array_into<T>(hid_t, const std::string&, T*, size_t);
SRBENCH_H5_ARRAY(float)
SRBENCH_H5_ARRAY(double)
SRBENCH_H5_ARRAY(int32_t)
SRBENCH_H5_ARRAY(int64_t)
#undef SRBENCH_H5_ARRAY

// ---- compound tables ------------------------------------------------------------------------

namespace {

// In memory a row is one 8-byte slot per column: char* (strings), int64_t or double.
constexpr size_t kSlot = 8;
static_assert(sizeof(char*) == kSlot && sizeof(int64_t) == kSlot && sizeof(double) == kSlot);

Id table_memory_type(const std::vector<Column>& columns) {
  Id str = string_type();
  Id t(H5Tcreate(H5T_COMPOUND, kSlot * std::max<size_t>(1, columns.size())));
  for (size_t c = 0; c < columns.size(); ++c) {
    const hid_t type = columns[c].type == ColumnType::String  ? hid_t(str)
                       : columns[c].type == ColumnType::Int64 ? H5T_NATIVE_INT64
                                                              : H5T_NATIVE_DOUBLE;
    H5Tinsert(t, columns[c].name.c_str(), c * kSlot, type);
  }
  return t;
}

}  // namespace

void write_table(hid_t loc, const std::string& name, const std::vector<Column>& columns,
                 const std::vector<TableRow>& rows) {
  const size_t C = columns.size();
  std::vector<unsigned char> buf(rows.size() * C * kSlot);
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].size() != C) throw Error("cannot write table " + where(loc, name) + ": a row has the wrong width");
    for (size_t c = 0; c < C; ++c) {
      unsigned char* slot = buf.data() + (r * C + c) * kSlot;
      const Cell& cell = rows[r][c];
      switch (columns[c].type) {
        case ColumnType::String: {
          const char* p = std::get<std::string>(cell).c_str();  // only read by H5Dwrite
          std::memcpy(slot, &p, kSlot);
          break;
        }
        case ColumnType::Int64: std::memcpy(slot, &std::get<int64_t>(cell), kSlot); break;
        case ColumnType::Double: std::memcpy(slot, &std::get<double>(cell), kSlot); break;
      }
    }
  }
  Id mem = table_memory_type(columns);
  Id file_type(H5Tcopy(mem));
  H5Tpack(file_type);
  write_raw(loc, name, file_type, mem, buf.data(), {static_cast<int64_t>(rows.size())});
}

std::vector<TableRow> read_table(hid_t loc, const std::string& name, const std::vector<Column>& columns) {
  size_t count = 0;
  Id ds = open_checked(loc, name, DatasetInfo::Compound, 1, nullptr, count);
  // The columns the file has; an optional one it lacks is filled with its type's default.
  Id file_type(H5Dget_type(ds));
  std::vector<Column> present;
  std::vector<bool> has(columns.size(), false);
  for (size_t c = 0; c < columns.size(); ++c) {
    has[c] = H5Tget_member_index(file_type, columns[c].name.c_str()) >= 0;
    if (has[c]) present.push_back(columns[c]);
    else if (!columns[c].optional) fail(loc, name, "has no column '" + columns[c].name + "'");
  }
  const size_t P = present.size();
  std::vector<unsigned char> buf(count * P * kSlot);
  std::vector<TableRow> rows;
  if (count == 0) return rows;
  Id mem = table_memory_type(present);
  Id dxpl = conversion_transfer(count, std::max(P * kSlot, H5Tget_size(file_type)) + 16);
  if (H5Dread(ds, mem, H5S_ALL, H5S_ALL, dxpl, buf.data()) < 0)
    fail(loc, name, "cannot be read as the expected table (missing fields or damaged?)");
  for (size_t r = 0; r < count; ++r) {
    TableRow row;
    size_t p = 0;
    for (size_t c = 0; c < columns.size(); ++c) {
      if (!has[c]) {
        row.push_back(columns[c].missing);
        continue;
      }
      const unsigned char* slot = buf.data() + (r * P + p++) * kSlot;
      switch (columns[c].type) {
        case ColumnType::String: {
          const char* text = nullptr;
          std::memcpy(&text, slot, kSlot);
          row.emplace_back(std::string(text ? text : ""));
          break;
        }
        case ColumnType::Int64: {
          int64_t v = 0;
          std::memcpy(&v, slot, kSlot);
          row.emplace_back(v);
          break;
        }
        case ColumnType::Double: {
          double v = 0;
          std::memcpy(&v, slot, kSlot);
          row.emplace_back(v);
          break;
        }
      }
    }
    rows.push_back(std::move(row));
  }
  Id space(H5Dget_space(ds));
  reclaim(mem, space, buf.data());
  return rows;
}

}  // namespace h5
}  // namespace srbench
