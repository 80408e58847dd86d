// Work that talks to the kernel runs as a Job: Run() on a libuv pool thread
// (it may block on the socket), Result() back on the JavaScript thread. The
// event loop never waits on the kernel.
#pragma once

#include <napi.h>

#include <functional>
#include <memory>

#include "channel.h"

#include "../netlink/socket.h"

namespace addon {

class Job {
 public:
  virtual ~Job() = default;
  // Worker thread. Must not touch Napi values. Sets `status` when the
  // conversation with the kernel failed as a whole.
  virtual void Run() = 0;
  // JavaScript thread, only when `status` is ok.
  virtual Napi::Value Result(Napi::Env env) = 0;

  nl::Status status;
};

// Opens a channel's socket (running its family's OnOpen hook, e.g. the
// genl family lookup) off-thread. `describe` builds the promise's value.
class OpenJob : public Job {
 public:
  using Describe = std::function<Napi::Value(Napi::Env)>;
  OpenJob(std::shared_ptr<Channel> ch, Describe describe = nullptr)
      : ch_(std::move(ch)), describe_(std::move(describe)) {}
  void Run() override;
  Napi::Value Result(Napi::Env env) override { return describe_ ? describe_(env) : env.Undefined(); }

 private:
  std::shared_ptr<Channel> ch_;
  Describe describe_;
};

// Runs the job off-thread; the promise resolves with Result() or rejects
// with an Error carrying errno, code and syscall.
Napi::Promise Schedule(Napi::Env env, std::unique_ptr<Job> job);

// An Error for a failed conversation: { message, errno, code, syscall,
// text (strerror), detail (the Status's own account) }.
Napi::Error StatusError(Napi::Env env, const nl::Status& st);

// Helpers for building results.
Napi::Value ErrorFields(Napi::Env env, const nl::Exchange& x);  // {errno, code, message}

}  // namespace addon
