#include "job.h"

#include "errno_name.h"

namespace addon {

namespace {

class JobWorker : public Napi::AsyncWorker {
 public:
  JobWorker(Napi::Env env, std::unique_ptr<Job> job)
      : Napi::AsyncWorker(env, "ipvs-netlink:job"), job_(std::move(job)), deferred_(env) {}

  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override { job_->Run(); }

  void OnOK() override {
    Napi::Env env = Env();
    if (!job_->status.ok()) {
      deferred_.Reject(StatusError(env, job_->status).Value());
      return;
    }
    Napi::Value v;
    try {
      v = job_->Result(env);
    } catch (const Napi::Error& e) {
      deferred_.Reject(e.Value());
      return;
    }
    deferred_.Resolve(v);
  }

  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  std::unique_ptr<Job> job_;
  Napi::Promise::Deferred deferred_;
};

}  // namespace

void OpenJob::Run() {
  std::lock_guard<std::mutex> g(ch_->mutex());
  status = ch_->Ensure();
}

Napi::Promise Schedule(Napi::Env env, std::unique_ptr<Job> job) {
  auto* w = new JobWorker(env, std::move(job));
  Napi::Promise p = w->Promise();
  w->Queue();
  return p;
}

Napi::Error StatusError(Napi::Env env, const nl::Status& st) {
  // The parts travel as properties: the TypeScript side builds its
  // NetlinkError from them. The message is for callers of the raw addon.
  std::string msg = st.where + ": " + ErrnoText(st.err);
  if (!st.message.empty()) msg += " (" + st.message + ")";
  Napi::Error e = Napi::Error::New(env, msg);
  e.Set("errno", Napi::Number::New(env, st.err));
  e.Set("code", Napi::String::New(env, ErrnoName(st.err)));
  e.Set("syscall", Napi::String::New(env, st.where));
  e.Set("text", Napi::String::New(env, ErrnoText(st.err)));
  e.Set("detail", Napi::String::New(env, st.message));
  return e;
}

Napi::Value ErrorFields(Napi::Env env, const nl::Exchange& x) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("errno", Napi::Number::New(env, x.error));
  o.Set("code", Napi::String::New(env, ErrnoName(x.error)));
  o.Set("message", Napi::String::New(env, x.ext_message));
  o.Set("text", Napi::String::New(env, x.error ? ErrnoText(x.error) : ""));
  return o;
}

}  // namespace addon
