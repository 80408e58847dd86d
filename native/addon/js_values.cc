#include "js_values.h"

#include <arpa/inet.h>

#include <cmath>
#include <cstring>

namespace addon {

bool Has(const Napi::Object& o, const char* key) {
  if (!o.Has(key)) return false;
  Napi::Value v = o.Get(key);
  return !v.IsUndefined() && !v.IsNull();
}

uint32_t GetUint(const Napi::Object& o, const char* key, const std::string& field, uint64_t max,
                 uint32_t fallback) {
  if (!Has(o, key)) return fallback;
  Napi::Value v = o.Get(key);
  if (!v.IsNumber()) throw Napi::TypeError::New(o.Env(), field + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= 0) || d > static_cast<double>(max) || std::floor(d) != d)
    throw Napi::RangeError::New(o.Env(), field + " must be an integer from 0 to " +
                                             std::to_string(max) + ", got " + std::to_string(d));
  return static_cast<uint32_t>(d);
}

bool GetBool(const Napi::Object& o, const char* key, bool fallback) {
  if (!Has(o, key)) return fallback;
  return o.Get(key).ToBoolean().Value();
}

std::string GetString(const Napi::Object& o, const char* key, const std::string& field,
                      size_t max_len, const std::string& fallback) {
  if (!Has(o, key)) return fallback;
  Napi::Value v = o.Get(key);
  if (!v.IsString()) throw Napi::TypeError::New(o.Env(), field + " must be a string");
  std::string s = v.As<Napi::String>().Utf8Value();
  if (s.size() > max_len)
    throw Napi::RangeError::New(o.Env(), field + " must be at most " + std::to_string(max_len) +
                                             " characters");
  if (s.find('\0') != std::string::npos)
    throw Napi::TypeError::New(o.Env(), field + " must not contain NUL");
  return s;
}

void GetAddress(const Napi::Object& o, const char* key, const std::string& field, int af,
                nf_inet_addr& out) {
  std::string s = GetString(o, key, field, 64);
  std::memset(&out, 0, sizeof out);
  if (s.empty() || inet_pton(af, s.c_str(), &out) != 1)
    throw Napi::TypeError::New(o.Env(), field + " must be an " +
                                            (af == AF_INET6 ? "IPv6" : "IPv4") +
                                            " address, got '" + s + "'");
}

std::string FormatAddress(int af, const void* addr) {
  char buf[INET6_ADDRSTRLEN];
  if (!inet_ntop(af == AF_INET6 ? AF_INET6 : AF_INET, addr, buf, sizeof buf)) return "";
  return buf;
}

Napi::Object GetObject(const Napi::Object& o, const char* key, const std::string& field) {
  Napi::Value v = o.Get(key);
  if (!v.IsObject()) throw Napi::TypeError::New(o.Env(), field + " must be an object");
  return v.As<Napi::Object>();
}

}  // namespace addon

namespace addon {

nl::SocketOptions SocketOptionsFromJs(const Napi::Value& v, int protocol) {
  nl::SocketOptions opts;
  opts.protocol = protocol;
  if (!v.IsObject()) return opts;
  Napi::Object o = v.As<Napi::Object>();
  opts.netns = GetString(o, "netns", "netns", 4096);
  opts.timeout_ms = static_cast<int>(GetUint(o, "timeoutMs", "timeoutMs", 24 * 3600 * 1000, 5000));
  if (opts.timeout_ms == 0) throw Napi::RangeError::New(o.Env(), "timeoutMs must be at least 1");
  opts.test_deaf_sockets = static_cast<int>(GetUint(o, "testDeafSockets", "testDeafSockets", 100));
  // Tests only: a small receive buffer, and sending regardless of it.
  if (Has(o, "testRcvbuf")) opts.rcvbuf = static_cast<int>(GetUint(o, "testRcvbuf", "testRcvbuf", 1u << 30));
  opts.test_ignore_budget = GetBool(o, "testIgnoreBudget");
  return opts;
}

Napi::Object CountersToJs(Napi::Env env, const nl::SocketCounters& c) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("sendmsgCalls", static_cast<double>(c.sendmsg_calls));
  o.Set("recvCalls", static_cast<double>(c.recv_calls));
  o.Set("messagesSent", static_cast<double>(c.messages_sent));
  o.Set("messagesReceived", static_cast<double>(c.messages_received));
  o.Set("dumpsRestarted", static_cast<double>(c.dumps_restarted));
  return o;
}

}  // namespace addon
