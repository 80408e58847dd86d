// ConntrackEvents: the JavaScript side of an EventStream. The reader
// thread wakes JavaScript through a thread-safe function; JavaScript then
// takes every queued record at once.
#include <mutex>

#include "../addon/job.h"
#include "../addon/js_values.h"
#include "handle.h"
#include "js_bridge.h"

namespace conntrack {

struct ConntrackEvents::State {
  EventOptions options;
  Napi::ThreadSafeFunction wake;
  std::mutex mu;  // guards stream (opened on a worker, used on the JS thread)
  std::unique_ptr<EventStream> stream;
  bool closed = false;

  void Close() {
    std::unique_ptr<EventStream> s;
    {
      std::lock_guard<std::mutex> g(mu);
      if (closed) return;
      closed = true;
      s = std::move(stream);
    }
    if (s) s->Stop();  // joins the reader: no wake after this
    wake.Release();
  }
};

namespace {

class OpenEventsJob : public addon::Job {
 public:
  // The job holds its own reference to the wake function (taken here, on
  // the JavaScript thread): a close() while it runs cannot free it under
  // a stream that is still starting.
  explicit OpenEventsJob(std::shared_ptr<ConntrackEvents::State> s) : s_(std::move(s)) { s_->wake.Acquire(); }
  void Run() override {
    std::unique_ptr<EventStream> stream;
    Napi::ThreadSafeFunction wake = s_->wake;
    status = EventStream::Open(s_->options, [wake]() mutable { wake.NonBlockingCall(); }, stream);
    if (status.ok()) {
      std::lock_guard<std::mutex> g(s_->mu);
      if (!s_->closed) s_->stream = std::move(stream);
    }
    stream.reset();  // closed meanwhile: stopped before the reference goes
    s_->wake.Release();
  }
  Napi::Value Result(Napi::Env env) override { return env.Undefined(); }

 private:
  std::shared_ptr<ConntrackEvents::State> s_;
};

}  // namespace

void ConntrackEvents::Init(Napi::Env env, Napi::Object exports) {
  exports.Set("ConntrackEvents", DefineClass(env, "ConntrackEvents",
                                             {InstanceMethod("open", &ConntrackEvents::Open),
                                              InstanceMethod("take", &ConntrackEvents::Take),
                                              InstanceMethod("close", &ConntrackEvents::Close)}));
}

ConntrackEvents::ConntrackEvents(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ConntrackEvents>(info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject() || !info[1].IsFunction())
    throw Napi::TypeError::New(env, "ConntrackEvents takes options and a function");
  Napi::Object o = info[0].As<Napi::Object>();
  state_ = std::make_shared<State>();
  state_->options.socket = addon::SocketOptionsFromJs(o, NETLINK_NETFILTER);
  state_->options.groups = addon::GetUint(o, "groups", "groups", 0xffffffffu);
  state_->options.filter = FilterFromJs(o.Get("filter"));
  state_->options.max_queued = addon::GetUint(o, "maxQueued", "maxQueued", 1u << 24, 16384);
  if (state_->options.max_queued == 0) throw Napi::RangeError::New(env, "maxQueued must be at least 1");
  state_->wake = Napi::ThreadSafeFunction::New(env, info[1].As<Napi::Function>(), "ipvs-netlink:conntrack-events", 0, 1);
}

ConntrackEvents::~ConntrackEvents() { state_->Close(); }

Napi::Value ConntrackEvents::Open(const Napi::CallbackInfo& info) {
  return addon::Schedule(info.Env(), std::make_unique<OpenEventsJob>(state_));
}

Napi::Value ConntrackEvents::Take(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  rec::Writer records;
  nl::Status error;
  {
    std::lock_guard<std::mutex> g(state_->mu);
    if (state_->stream) state_->stream->Take(records, error);
  }
  Napi::Object o = records.ToJs(env);
  if (!error.ok()) o.Set("error", addon::StatusError(env, error).Value());
  return o;
}

Napi::Value ConntrackEvents::Close(const Napi::CallbackInfo& info) {
  state_->Close();
  return info.Env().Undefined();
}

}  // namespace conntrack
