// nf_tables' ruleset changes as the kernel announces them once committed
// (NFNLGRP_NFTABLES, what `nft monitor` shows): every message of a
// transaction (a new rule, a deleted set, ...) and then NEWGEN with the
// generation and the committing process. Read as nl::MulticastReader reads
// (its own thread, a bounded queue, dropped messages announced), each
// decoded on the reader thread by the same schemas as a dump's replies.
// NftablesEvents is the object behind `Nftables.events()`.
#pragma once

#include <napi.h>

#include <memory>
#include <vector>

#include "../addon/event_source.h"
#include "../netlink/multicast.h"
#include "codec.h"

namespace nft {

struct RulesetEvent {
  enum class Kind : uint8_t { kMessage, kOverrun, kUnknown };
  Kind kind = Kind::kMessage;
  Message message;        // kMessage
  uint8_t msg_type = 0;   // kUnknown: a message type this library has no schema for
  uint32_t port_id = 0;   // the committing socket's port id (nlmsg_pid)
  uint16_t flags = 0;     // nlmsg_flags: NLM_F_APPEND tells an appended rule from one put first
};

class RulesetEvents : public nl::MulticastReader {
 public:
  static nl::Status Open(const nl::SocketOptions& socket, size_t max_queued, Wake wake,
                         std::unique_ptr<RulesetEvents>& out);
  ~RulesetEvents() override;

  // Everything queued since the last call; `error` is set (and stays set)
  // once the socket failed, after the events read before it.
  void Take(std::vector<RulesetEvent>& out, nl::Status& error);

 private:
  RulesetEvents(size_t max_queued, Wake wake);
  bool Queue(const nl::Message& m, std::string& why) override;
  void QueueOverrun() override;
  size_t Queued() const override { return queue_.size(); }

  std::vector<RulesetEvent> queue_;
};

class NftablesEvents : public Napi::ObjectWrap<NftablesEvents> {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
  // new NftablesEvents({ netns?, maxQueued }, onReadable)
  explicit NftablesEvents(const Napi::CallbackInfo& info);
  ~NftablesEvents() override;

 private:
  Napi::Value Open(const Napi::CallbackInfo& info);
  // { events, error? }: everything read since the last call; each event
  // { type, family, resId, portId, flags, attrs } as a dump's reply, or
  // { overrun: true }, or { unknown: msgType }.
  Napi::Value Take(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);

  using Source = addon::EventSource<RulesetEvents>;
  std::shared_ptr<Source> source_;
};

}  // namespace nft
