// Pure functions for unit tests: a transaction's messages as they would be
// sent, and any nf_tables message decoded, without a socket.
#include "handle.h"
#include "transaction.h"

namespace nft {

namespace {

// nftEncode(changes, { genid? }) -> Buffer[]: BEGIN, the changes, END.
Napi::Value Encode(const Napi::CallbackInfo& info) {
  std::unique_ptr<Transaction> t = TransactionFromJs(info);
  Napi::Array out = Napi::Array::New(info.Env(), t->messages().size());
  for (size_t i = 0; i < t->messages().size(); i++) {
    const nl::Bytes& m = t->messages()[i];
    out.Set(static_cast<uint32_t>(i), Napi::Buffer<uint8_t>::Copy(info.Env(), m.data(), m.size()));
  }
  return out;
}

// nftDecode(message) -> { type, family, resId, attrs }; throws on malformed input.
Napi::Value Decode(const Napi::CallbackInfo& info) {
  if (!info[0].IsBuffer()) throw Napi::TypeError::New(info.Env(), "nftDecode takes a Buffer");
  Napi::Buffer<uint8_t> b = info[0].As<Napi::Buffer<uint8_t>>();
  Message m;
  std::string err;
  if (!DecodeMessage(b.Data(), b.Length(), m, err)) throw Napi::Error::New(info.Env(), err);
  return MessageToJs(info.Env(), m);
}

// nftAttrPath(message, offset) -> { path, item }.
Napi::Value AttrPath(const Napi::CallbackInfo& info) {
  if (!info[0].IsBuffer() || !info[1].IsNumber()) throw Napi::TypeError::New(info.Env(), "nftAttrPath(Buffer, offset)");
  Napi::Buffer<uint8_t> b = info[0].As<Napi::Buffer<uint8_t>>();
  long item = -1;
  const std::string path = AttrPathAt(b.Data(), b.Length(), info[1].As<Napi::Number>().Uint32Value(), &item);
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("path", path);
  o.Set("item", static_cast<double>(item));
  return o;
}

}  // namespace

void RegisterTestEntryPoints(Napi::Env env, Napi::Object exports) {
  exports.Set("nftEncode", Napi::Function::New(env, Encode));
  exports.Set("nftDecode", Napi::Function::New(env, Decode));
  exports.Set("nftAttrPath", Napi::Function::New(env, AttrPath));
}

}  // namespace nft
