#include "gossip/wire.h"

#include <algorithm>
#include <string>

#include "gossip/config.h"
#include "record/msgpack_reader.h"

namespace mesh::gossip {
namespace {

using msgpack_reader::Reader;
using msgpack_reader::ReadStatus;

// The few msgpack forms a frame uses, each integer in its shortest form.
class Packer {
 public:
  explicit Packer(Bytes& out) : out_(out) {}

  void array(std::uint32_t count) {
    if (count < 16) {
      out_.push_back(static_cast<std::uint8_t>(0x90 | count));
    } else if (count <= 0xffff) {
      out_.push_back(0xdc);
      big_endian(count, 2);
    } else {
      out_.push_back(0xdd);
      big_endian(count, 4);
    }
  }

  void uint(std::uint64_t value) {
    if (value < 128) {
      out_.push_back(static_cast<std::uint8_t>(value));
    } else if (value <= 0xff) {
      out_.push_back(0xcc);
      big_endian(value, 1);
    } else if (value <= 0xffff) {
      out_.push_back(0xcd);
      big_endian(value, 2);
    } else if (value <= 0xffffffffu) {
      out_.push_back(0xce);
      big_endian(value, 4);
    } else {
      out_.push_back(0xcf);
      big_endian(value, 8);
    }
  }

  void bin(ByteView bytes) {
    if (bytes.size() <= 0xff) {
      out_.push_back(0xc4);
      big_endian(bytes.size(), 1);
    } else if (bytes.size() <= 0xffff) {
      out_.push_back(0xc5);
      big_endian(bytes.size(), 2);
    } else {
      out_.push_back(0xc6);
      big_endian(bytes.size(), 4);
    }
    out_.insert(out_.end(), bytes.begin(), bytes.end());
  }

 private:
  void big_endian(std::uint64_t value, int width) {
    for (int shift = 8 * (width - 1); shift >= 0; shift -= 8) {
      out_.push_back(static_cast<std::uint8_t>(value >> shift));
    }
  }
  Bytes& out_;
};

void pack_list_message(Packer& packer, MessageType type, const std::vector<Entry>& entries,
                       bool with_hash) {
  MESH_CHECK(entries.size() <= kEntriesPerListMax, "entry list over kEntriesPerListMax");
  packer.array(2);
  packer.uint(static_cast<std::uint8_t>(type));
  packer.array(static_cast<std::uint32_t>(entries.size() * (with_hash ? 4 : 3)));
  for (const Entry& entry : entries) {
    packer.uint(static_cast<std::uint8_t>(entry.kind));
    packer.uint(entry.origin);
    packer.uint(entry.seq);
    if (with_hash) packer.uint(entry.hash32);
  }
}

std::size_t message_count(const FrameContent& content) {
  return (content.prune.empty() ? 0 : 1) + (content.graft.empty() ? 0 : 1) +
         (content.summary ? 1 : 0) + (content.sync ? 1 : 0) + (content.sync_reply ? 1 : 0) +
         (content.ihave.empty() ? 0 : 1) + content.bodies.size();
}

// A non-negative integer of at most `max`.
bool read_uint(Reader& reader, std::uint64_t max, std::uint64_t* value) {
  return reader.read_uint(value) == ReadStatus::ok && *value <= max;
}

// A flat entry list; entries of a kind this version does not know are skipped.
bool read_entries(Reader& reader, bool with_hash, std::vector<Entry>& out) {
  const std::uint32_t width = with_hash ? 4 : 3;
  std::uint32_t count = 0;
  if (reader.read_array_header(&count, kEntriesPerListMax * 4) != ReadStatus::ok ||
      count % width != 0 || count / width > kEntriesPerListMax) {
    return false;
  }
  out.reserve(out.size() + count / width);
  for (std::uint32_t i = 0; i < count; i += width) {
    std::uint64_t kind = 0, origin = 0, seq = 0, hash = 0;
    if (!read_uint(reader, 255, &kind) || !read_uint(reader, UINT32_MAX, &origin) ||
        !read_uint(reader, UINT64_MAX, &seq) ||
        (with_hash && !read_uint(reader, UINT32_MAX, &hash))) {
      return false;
    }
    if (kind != static_cast<std::uint8_t>(RecordKind::roster) &&
        kind != static_cast<std::uint8_t>(RecordKind::report)) {
      continue;
    }
    out.push_back(Entry{static_cast<RecordKind>(kind), static_cast<std::uint32_t>(origin), seq,
                        static_cast<std::uint32_t>(hash)});
  }
  return true;
}

bool read_optional_list(Reader& reader, std::optional<std::vector<Entry>>& out) {
  if (!out) out.emplace();
  return read_entries(reader, true, *out);
}

// One message: [type, ...] with `elements` elements in all.
bool read_message(Reader& reader, FrameContent& out) {
  std::uint32_t elements = 0;
  std::uint64_t type = 0;
  if (reader.read_array_header(&elements, kEntriesPerListMax * 4) != ReadStatus::ok ||
      elements == 0 || reader.read_uint(&type) != ReadStatus::ok) {
    return false;
  }
  const bool known = type >= static_cast<std::uint8_t>(MessageType::push) &&
                     type <= static_cast<std::uint8_t>(MessageType::summary);
  if (!known) {
    // A newer peer's message: skip its elements (flat values or lists).
    const msgpack_reader::SkipLimits limits{0, kRecordBytesMax, kEntriesPerListMax * 4, 1};
    for (std::uint32_t i = 1; i < elements; ++i) {
      if (reader.skip_value(limits) != ReadStatus::ok) return false;
    }
    ++out.unknown_messages;
    return true;
  }
  if (type == static_cast<std::uint8_t>(MessageType::summary)) {
    // [8, cutoff_ms, bin 16], once per frame.
    ByteView digest;
    Summary summary;
    if (elements != 3 || out.summary || reader.read_uint(&summary.cutoff_ms) != ReadStatus::ok ||
        reader.read_bin(&digest, kSummaryBytes) != ReadStatus::ok || digest.size() != kSummaryBytes) {
      return false;
    }
    std::copy(digest.begin(), digest.end(), summary.digest.begin());
    out.summary = summary;
    return true;
  }
  if (elements != 2) return false;
  switch (static_cast<MessageType>(type)) {
    case MessageType::push:
    case MessageType::repair: {
      ByteView raw;
      if (reader.read_bin(&raw, kRecordBytesMax) != ReadStatus::ok) return false;
      out.bodies.push_back(Body{type == static_cast<std::uint8_t>(MessageType::repair), raw, {}});
      return true;
    }
    case MessageType::ihave: return read_entries(reader, false, out.ihave);
    case MessageType::graft: return read_entries(reader, false, out.graft);
    case MessageType::prune: return read_entries(reader, false, out.prune);
    case MessageType::sync: return read_optional_list(reader, out.sync);
    case MessageType::sync_reply: return read_optional_list(reader, out.sync_reply);
    case MessageType::summary: return false;  // read above
  }
  return false;
}

bool lists_within_bounds(const FrameContent& content) {
  auto ok = [](std::size_t size) { return size <= kEntriesPerListMax; };
  return ok(content.ihave.size()) && ok(content.graft.size()) && ok(content.prune.size()) &&
         (!content.sync || ok(content.sync->size())) &&
         (!content.sync_reply || ok(content.sync_reply->size()));
}

}  // namespace

Body Body::owned(bool repair, std::shared_ptr<const Bytes> bytes) {
  Body body{repair, ByteView(*bytes), {}};
  body.keep = std::move(bytes);
  return body;
}

Body Body::owned(bool repair, Bytes bytes) {
  return owned(repair, std::make_shared<const Bytes>(std::move(bytes)));
}

bool FrameContent::empty() const {
  return bodies.empty() && ihave.empty() && graft.empty() && prune.empty() && !summary && !sync &&
         !sync_reply;
}

std::size_t body_bytes_max(std::size_t raw_size) { return 1 + 1 + 5 + raw_size; }

void encode_frame_content(const FrameContent& content, Bytes& out) {
  Packer packer(out);
  packer.array(2);
  packer.uint(content.roster_version);
  const std::size_t count = message_count(content);
  MESH_CHECK(count <= kMessagesPerFrameMax, "frame over kMessagesPerFrameMax");
  packer.array(static_cast<std::uint32_t>(count));
  if (!content.prune.empty()) pack_list_message(packer, MessageType::prune, content.prune, false);
  if (!content.graft.empty()) pack_list_message(packer, MessageType::graft, content.graft, false);
  if (content.summary) {
    packer.array(3);
    packer.uint(static_cast<std::uint8_t>(MessageType::summary));
    packer.uint(content.summary->cutoff_ms);
    packer.bin(ByteView(content.summary->digest.data(), content.summary->digest.size()));
  }
  if (content.sync) pack_list_message(packer, MessageType::sync, *content.sync, true);
  if (content.sync_reply) {
    pack_list_message(packer, MessageType::sync_reply, *content.sync_reply, true);
  }
  if (!content.ihave.empty()) pack_list_message(packer, MessageType::ihave, content.ihave, false);
  for (const Body& body : content.bodies) {
    MESH_CHECK(body.raw.size() <= kRecordBytesMax, "body over kRecordBytesMax");
    packer.array(2);
    packer.uint(static_cast<std::uint8_t>(body.repair ? MessageType::repair : MessageType::push));
    packer.bin(body.raw);
  }
}

Bytes encode_frame_content(const FrameContent& content) {
  Bytes out;
  encode_frame_content(content, out);
  return out;
}

Result<FrameContent, WireError> decode_frame_content(ByteView plaintext) {
  if (plaintext.size() > kFrameBytesMax) return make_error(WireError::oversize, "plaintext over kFrameBytesMax");
  FrameContent content;
  Reader reader(plaintext);
  std::uint32_t root = 0;
  std::uint32_t messages = 0;
  if (reader.read_array_header(&root) != ReadStatus::ok || root != 2 ||
      reader.read_uint(&content.roster_version) != ReadStatus::ok ||
      reader.read_array_header(&messages) != ReadStatus::ok) {
    return make_error(WireError::malformed, "frame content is not [roster_version, [messages]]");
  }
  if (messages > kMessagesPerFrameMax) {
    return make_error(WireError::oversize, "more than kMessagesPerFrameMax messages");
  }
  for (std::uint32_t i = 0; i < messages; ++i) {
    if (!read_message(reader, content)) {
      return make_error(WireError::malformed, "message " + std::to_string(i) + " malformed");
    }
  }
  if (!reader.at_end()) return make_error(WireError::malformed, "trailing bytes after frame content");
  if (!lists_within_bounds(content)) return make_error(WireError::oversize, "merged entry list over kEntriesPerListMax");
  return content;
}

}  // namespace mesh::gossip
