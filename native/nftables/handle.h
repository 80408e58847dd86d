// NftablesHandle: the JavaScript-visible object behind `Nftables`. It owns
// a Channel on NETLINK_NETFILTER; changes are checked and encoded on the
// JavaScript thread (a bad one throws before anything is sent), and every
// conversation with the kernel runs off it.
#pragma once

#include <napi.h>

#include <memory>

#include "../addon/channel.h"

namespace nft {

class Transaction;

class NftablesHandle : public Napi::ObjectWrap<NftablesHandle> {
 public:
  static void Init(Napi::Env env, Napi::Object exports);
  explicit NftablesHandle(const Napi::CallbackInfo& info);
  ~NftablesHandle() override;

 private:
  Napi::Value Open(const Napi::CallbackInfo& info);
  // commit(changes, { genid? }): one transaction. Resolves { failures,
  // whole? } (see transaction.h); rejects when the conversation broke.
  Napi::Value Commit(const Napi::CallbackInfo& info);
  // query(requests): gets and dumps (NLM_F_DUMP when `dump`), in one
  // conversation. Resolves one { errno, code, message, messages } each.
  Napi::Value Query(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  Napi::Value Counters(const Napi::CallbackInfo& info);
  Napi::Value ReleaseBuffers(const Napi::CallbackInfo& info);
  Napi::Value TestBufferResidency(const Napi::CallbackInfo& info);

  std::shared_ptr<addon::Channel> channel_;
};

// A transaction from commit()'s arguments (changes, { genid? }), encoded.
std::unique_ptr<Transaction> TransactionFromJs(const Napi::CallbackInfo& info);
// The uapi constants the TypeScript layer names (constants.cc).
Napi::Object Constants(Napi::Env env);
// nftEncode, nftDecode, nftAttrPath for unit tests (test_entry_points.cc).
void RegisterTestEntryPoints(Napi::Env env, Napi::Object exports);

}  // namespace nft
