// The work an IpsetHandle schedules: each job runs off the JavaScript
// thread under the channel's mutex, so one handle's requests never
// interleave on its socket.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "../addon/channel.h"
#include "../addon/job.h"
#include "bulk.h"
#include "codec.h"
#include "session.h"

namespace ipset {

struct Shared {
  std::shared_ptr<addon::Channel> channel;
  std::shared_ptr<Session> session;
};

// Opens the socket (negotiating the protocol); resolves { version, min }.
std::unique_ptr<addon::Job> MakeOpenJob(Shared s);

// CREATE (with the revision the kernel offers), DESTROY, FLUSH, RENAME,
// SWAP. Resolves { errno, code, message }.
struct CommandOp {
  uint8_t cmd = 0;
  std::string name, name2;
  CreateSpec create;
  bool exist = false;
};
std::unique_ptr<addon::Job> MakeCommandJob(Shared s, CommandOp op);

// LIST with IPSET_FLAG_LIST_SETNAME / _HEADER or 0, of one set or all.
// Resolves { errno, code, message, sets: [...] }.
std::unique_ptr<addon::Job> MakeListJob(Shared s, std::string name, uint32_t flags);

// ADD / DEL / TEST of parsed entries. One entry with `single` goes as one
// DATA message (as `ipset add` sends it) and resolves { errno, code,
// message, applied, index }; otherwise a BulkLoad (bulk.h) pipelines ADT
// messages and resolves what became of every entry as well: failures,
// skipped, unconfirmed and, when it stopped early, halt.
struct ElementsOp {
  uint8_t cmd = 0;
  std::string name;
  const SetType* type = nullptr;
  uint8_t family = NFPROTO_IPV4;
  std::vector<Entry> entries;
  bool single = false;
  bool exist = false;
};
std::unique_ptr<addon::Job> MakeElementsJob(Shared s, ElementsOp op);

// What a finished BulkLoad resolves to (also used by the unit-test driver).
Napi::Object BulkResultToJs(Napi::Env env, const BulkLoad& b, uint8_t cmd, const SetType* type);

}  // namespace ipset
