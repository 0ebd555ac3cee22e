#include "gossip/wire.h"

#include <msgpack.hpp>

#include "gossip/config.h"

namespace mesh::gossip {
namespace {

using Packer = msgpack::packer<msgpack::sbuffer>;

void pack_entries(Packer& packer, const std::vector<Entry>& entries, bool with_hash) {
  MESH_CHECK(entries.size() <= kEntriesPerListMax, "entry list over kEntriesPerListMax");
  packer.pack_array(static_cast<std::uint32_t>(entries.size() * (with_hash ? 4 : 3)));
  for (const Entry& entry : entries) {
    packer.pack_uint8(static_cast<std::uint8_t>(entry.kind));
    packer.pack_uint32(entry.origin);
    packer.pack_uint64(entry.seq);
    if (with_hash) packer.pack_uint32(entry.hash32);
  }
}

void pack_list_message(Packer& packer, MessageType type, const std::vector<Entry>& entries,
                       bool with_hash) {
  packer.pack_array(2);
  packer.pack_uint8(static_cast<std::uint8_t>(type));
  pack_entries(packer, entries, with_hash);
}

std::size_t message_count(const FrameContent& content) {
  return (content.prune.empty() ? 0 : 1) + (content.graft.empty() ? 0 : 1) +
         (content.sync ? 1 : 0) + (content.sync_reply ? 1 : 0) +
         (content.ihave.empty() ? 0 : 1) + content.bodies.size();
}

bool is_uint(const msgpack::object& o, std::uint64_t max) {
  return o.type == msgpack::type::POSITIVE_INTEGER && o.via.u64 <= max;
}

// Reads a flat entry list; entries of a kind this version does not know are skipped.
bool read_entries(const msgpack::object& list, bool with_hash, std::vector<Entry>& out) {
  const std::size_t width = with_hash ? 4 : 3;
  if (list.type != msgpack::type::ARRAY || list.via.array.size % width != 0) return false;
  if (list.via.array.size / width > kEntriesPerListMax) return false;
  for (std::size_t i = 0; i < list.via.array.size; i += width) {
    const msgpack::object* field = list.via.array.ptr + i;
    if (!is_uint(field[0], 255) || !is_uint(field[1], UINT32_MAX) ||
        !is_uint(field[2], UINT64_MAX) || (with_hash && !is_uint(field[3], UINT32_MAX))) {
      return false;
    }
    const auto kind = field[0].via.u64;
    if (kind != static_cast<std::uint8_t>(RecordKind::roster) &&
        kind != static_cast<std::uint8_t>(RecordKind::report)) {
      continue;
    }
    out.push_back(Entry{static_cast<RecordKind>(kind), static_cast<std::uint32_t>(field[1].via.u64),
                        field[2].via.u64,
                        with_hash ? static_cast<std::uint32_t>(field[3].via.u64) : 0});
  }
  return true;
}

bool read_body(const msgpack::object& message, bool repair, FrameContent& out) {
  if (message.via.array.size != 2) return false;
  const msgpack::object& raw = message.via.array.ptr[1];
  if (raw.type != msgpack::type::BIN || raw.via.bin.size > kRecordBytesMax) return false;
  const auto* data = reinterpret_cast<const std::uint8_t*>(raw.via.bin.ptr);
  out.bodies.push_back(Body{repair, Bytes(data, data + raw.via.bin.size)});
  return true;
}

bool read_list(const msgpack::object& message, bool with_hash, std::vector<Entry>& out) {
  return message.via.array.size == 2 && read_entries(message.via.array.ptr[1], with_hash, out);
}

bool read_optional_list(const msgpack::object& message, std::optional<std::vector<Entry>>& out) {
  if (!out) out.emplace();
  return read_list(message, true, *out);
}

bool read_message(const msgpack::object& message, FrameContent& out) {
  if (message.type != msgpack::type::ARRAY || message.via.array.size == 0) return false;
  const msgpack::object& type = message.via.array.ptr[0];
  if (type.type != msgpack::type::POSITIVE_INTEGER) return false;
  switch (type.via.u64) {
    case static_cast<std::uint8_t>(MessageType::push): return read_body(message, false, out);
    case static_cast<std::uint8_t>(MessageType::repair): return read_body(message, true, out);
    case static_cast<std::uint8_t>(MessageType::ihave): return read_list(message, false, out.ihave);
    case static_cast<std::uint8_t>(MessageType::graft): return read_list(message, false, out.graft);
    case static_cast<std::uint8_t>(MessageType::prune): return read_list(message, false, out.prune);
    case static_cast<std::uint8_t>(MessageType::sync): return read_optional_list(message, out.sync);
    case static_cast<std::uint8_t>(MessageType::sync_reply):
      return read_optional_list(message, out.sync_reply);
    default:
      ++out.unknown_messages;  // a newer peer's message: skip it
      return true;
  }
}

bool lists_within_bounds(const FrameContent& content) {
  auto ok = [](std::size_t size) { return size <= kEntriesPerListMax; };
  return ok(content.ihave.size()) && ok(content.graft.size()) && ok(content.prune.size()) &&
         (!content.sync || ok(content.sync->size())) &&
         (!content.sync_reply || ok(content.sync_reply->size()));
}

}  // namespace

bool FrameContent::empty() const {
  return bodies.empty() && ihave.empty() && graft.empty() && prune.empty() && !sync && !sync_reply;
}

std::size_t body_bytes_max(std::size_t raw_size) { return 1 + 1 + 5 + raw_size; }

Bytes encode_frame_content(const FrameContent& content) {
  msgpack::sbuffer buffer;
  Packer packer(buffer);
  packer.pack_array(2);
  packer.pack_uint64(content.roster_version);
  const std::size_t count = message_count(content);
  MESH_CHECK(count <= kMessagesPerFrameMax, "frame over kMessagesPerFrameMax");
  packer.pack_array(static_cast<std::uint32_t>(count));
  if (!content.prune.empty()) pack_list_message(packer, MessageType::prune, content.prune, false);
  if (!content.graft.empty()) pack_list_message(packer, MessageType::graft, content.graft, false);
  if (content.sync) pack_list_message(packer, MessageType::sync, *content.sync, true);
  if (content.sync_reply) {
    pack_list_message(packer, MessageType::sync_reply, *content.sync_reply, true);
  }
  if (!content.ihave.empty()) pack_list_message(packer, MessageType::ihave, content.ihave, false);
  for (const Body& body : content.bodies) {
    MESH_CHECK(body.raw.size() <= kRecordBytesMax, "body over kRecordBytesMax");
    packer.pack_array(2);
    packer.pack_uint8(static_cast<std::uint8_t>(body.repair ? MessageType::repair
                                                            : MessageType::push));
    packer.pack_bin(static_cast<std::uint32_t>(body.raw.size()));
    packer.pack_bin_body(reinterpret_cast<const char*>(body.raw.data()),
                         static_cast<std::uint32_t>(body.raw.size()));
  }
  const auto* data = reinterpret_cast<const std::uint8_t*>(buffer.data());
  return Bytes(data, data + buffer.size());
}

Result<FrameContent, WireError> decode_frame_content(ByteView plaintext) {
  if (plaintext.size() > kFrameBytesMax) return make_error(WireError::oversize, "plaintext over kFrameBytesMax");
  // Limits stop a hostile frame from making the unpacker allocate much:
  // arrays up to the longest entry list, no maps/strings/ext, depth 4.
  const msgpack::unpack_limit limit(kEntriesPerListMax * 4, 0, 0, kRecordBytesMax, 0, 4);
  FrameContent content;
  try {
    std::size_t offset = 0;
    bool referenced = false;
    msgpack::object_handle handle =
        msgpack::unpack(reinterpret_cast<const char*>(plaintext.data()), plaintext.size(), offset,
                        referenced, nullptr, nullptr, limit);
    if (offset != plaintext.size()) return make_error(WireError::malformed, "trailing bytes after frame content");
    const msgpack::object& root = handle.get();
    if (root.type != msgpack::type::ARRAY || root.via.array.size != 2 ||
        !is_uint(root.via.array.ptr[0], UINT64_MAX) ||
        root.via.array.ptr[1].type != msgpack::type::ARRAY) {
      return make_error(WireError::malformed, "frame content is not [roster_version, [messages]]");
    }
    content.roster_version = root.via.array.ptr[0].via.u64;
    const msgpack::object& messages = root.via.array.ptr[1];
    if (messages.via.array.size > kMessagesPerFrameMax) {
      return make_error(WireError::oversize, "more than kMessagesPerFrameMax messages");
    }
    for (std::size_t i = 0; i < messages.via.array.size; ++i) {
      if (!read_message(messages.via.array.ptr[i], content)) {
        return make_error(WireError::malformed, "message " + std::to_string(i) + " malformed");
      }
    }
  } catch (const std::exception& error) {
    return make_error(WireError::malformed, std::string("frame content: ") + error.what());
  }
  if (!lists_within_bounds(content)) return make_error(WireError::oversize, "merged entry list over kEntriesPerListMax");
  return content;
}

}  // namespace mesh::gossip
