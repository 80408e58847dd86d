#include "js_bridge.h"

#include <cmath>
#include <cstring>

namespace nft {

namespace {

[[noreturn]] void TypeErr(Napi::Env env, const std::string& path, const std::string& what) {
  throw Napi::TypeError::New(env, path + " must be " + what);
}

uint64_t NumberFromJs(const Napi::Value& v, Kind kind, const std::string& path) {
  Napi::Env env = v.Env();
  if (v.IsBigInt()) {
    bool lossless = false;
    const uint64_t x = v.As<Napi::BigInt>().Uint64Value(&lossless);
    if (!lossless || (kind != Kind::kBe64 && kind != Kind::kBe64Big && x > 0xffffffffULL))
      throw Napi::RangeError::New(env, path + " is out of range");
    return x;
  }
  if (!v.IsNumber()) TypeErr(env, path, "an integer");
  const double d = v.As<Napi::Number>().DoubleValue();
  double lo = 0, hi = 0;
  switch (kind) {
    case Kind::kU8: hi = 0xff; break;
    case Kind::kBe16: hi = 0xffff; break;
    case Kind::kBe32: hi = 0xffffffffu; break;
    case Kind::kBeS32: lo = -2147483648.0; hi = 2147483647.0; break;
    default: hi = 9007199254740991.0; break;
  }
  if (!(d >= lo && d <= hi) || std::floor(d) != d)
    throw Napi::RangeError::New(env, path + " must be an integer from " + std::to_string(static_cast<int64_t>(lo)) +
                                         " to " + std::to_string(static_cast<uint64_t>(hi)));
  return d < 0 ? static_cast<uint64_t>(static_cast<int64_t>(d)) : static_cast<uint64_t>(d);
}

std::string BytesFromJs(const Napi::Value& v, const std::string& path) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    TypeErr(v.Env(), path, "a Buffer or Uint8Array");
  Napi::Uint8Array a = v.As<Napi::Uint8Array>();
  return std::string(reinterpret_cast<const char*>(a.Data()), a.ByteLength());
}

std::string StringFromJs(const Napi::Value& v, const std::string& path) {
  if (!v.IsString()) TypeErr(v.Env(), path, "a string");
  std::string s = v.As<Napi::String>().Utf8Value();
  if (s.find('\0') != std::string::npos) TypeErr(v.Env(), path, "a string without NUL");
  return s;
}

Value FieldFromJs(const Napi::Value& v, const Field& f, const std::string& path) {
  Value out;
  switch (f.kind) {
    case Kind::kString:
    case Kind::kStringUnterminated:
      out.type = Value::Type::kString;
      out.str = StringFromJs(v, path);
      return out;
    case Kind::kBytes:
      out.type = Value::Type::kBytes;
      out.str = BytesFromJs(v, path);
      return out;
    case Kind::kItems: {
      out.type = Value::Type::kBytes;
      out.str = BytesFromJs(v, path);
      std::string error;
      if (!ItemsOk(reinterpret_cast<const uint8_t*>(out.str.data()), out.str.size(), error))
        throw Napi::TypeError::New(v.Env(), path + " must be list items of netlink attributes: " + path + error);
      return out;
    }
    case Kind::kFlag:
      if (!v.IsBoolean() || !v.As<Napi::Boolean>().Value()) TypeErr(v.Env(), path, "true");
      out.type = Value::Type::kFlag;
      return out;
    case Kind::kNest:
      return ObjectFromJs(v, *f.schema, path);
    case Kind::kExpr:
    case Kind::kObjData:
      return ExpressionFromJs(v, path);
    case Kind::kList:
    case Kind::kExprList: {
      if (!v.IsArray()) TypeErr(v.Env(), path, "an array");
      Napi::Array a = v.As<Napi::Array>();
      out.type = Value::Type::kList;
      out.items.reserve(a.Length());
      for (uint32_t i = 0; i < a.Length(); i++) {
        const std::string at = path + "[" + std::to_string(i) + "]";
        out.items.push_back(f.kind == Kind::kList ? ObjectFromJs(a.Get(i), *f.schema, at)
                                                  : ExpressionFromJs(a.Get(i), at));
      }
      return out;
    }
    case Kind::kData:
      // A value is its bytes; a verdict is { code, chain? }.
      if (v.IsTypedArray()) {
        out.type = Value::Type::kBytes;
        out.str = BytesFromJs(v, path);
        return out;
      }
      return ObjectFromJs(v, VerdictSchema(), path);
    default:
      out.type = Value::Type::kNumber;
      out.num = NumberFromJs(v, f.kind, path);
      return out;
  }
}

void FieldsFromJs(const Napi::Object& o, const Schema& s, Value& out, const std::string& path, const char* skip) {
  Napi::Array keys = o.GetPropertyNames();
  for (uint32_t i = 0; i < keys.Length(); i++) {
    const std::string k = keys.Get(i).As<Napi::String>().Utf8Value();
    if (skip && k == skip) continue;
    if (!s.ByName(k.c_str()) && !o.Get(k).IsUndefined())
      throw Napi::TypeError::New(o.Env(), path + "." + k + " is not a field of " + s.name);
  }
  out.type = Value::Type::kObject;
  out.schema = &s;
  for (const Field& f : s.fields) {
    Napi::Value v = o.Get(f.name);
    if (v.IsUndefined()) continue;
    out.fields.emplace_back(&f, FieldFromJs(v, f, path + "." + f.name));
  }
}

Napi::Object ObjectToJs(Napi::Env env, const Value& v, Napi::Object o) {
  for (const auto& [f, x] : v.fields) o.Set(f->name, ToJs(env, x, f->kind));
  return o;
}

}  // namespace

Value ObjectFromJs(const Napi::Value& v, const Schema& s, const std::string& path) {
  if (!v.IsObject() || v.IsArray()) TypeErr(v.Env(), path, "an object");
  Value out;
  FieldsFromJs(v.As<Napi::Object>(), s, out, path, nullptr);
  return out;
}

Value ExpressionFromJs(const Napi::Value& v, const std::string& path) {
  if (!v.IsObject() || v.IsArray()) TypeErr(v.Env(), path, "an expression object");
  Napi::Object o = v.As<Napi::Object>();
  Value out;
  const std::string name = StringFromJs(o.Get("type"), path + ".type");
  const Schema* s = ExpressionSchema(name.c_str());
  if (!s) {
    // An expression the library does not know, as it was read.
    out.type = Value::Type::kObject;
    out.str = name;
    out.raw = BytesFromJs(o.Get("raw"), path + ".raw");
    return out;
  }
  FieldsFromJs(o, *s, out, path, "type");
  out.str = name;
  return out;
}

Napi::Value ToJs(Napi::Env env, const Value& v, Kind kind) {
  switch (v.type) {
    case Value::Type::kNone: return env.Undefined();
    case Value::Type::kFlag: return Napi::Boolean::New(env, true);
    case Value::Type::kString: return Napi::String::New(env, v.str);
    case Value::Type::kBytes: return Napi::Buffer<uint8_t>::Copy(env, reinterpret_cast<const uint8_t*>(v.str.data()), v.str.size());
    case Value::Type::kNumber:
      if (kind == Kind::kBe64Big) return Napi::BigInt::New(env, v.num);
      if (kind == Kind::kBeS32) return Napi::Number::New(env, static_cast<double>(static_cast<int64_t>(v.num)));
      return Napi::Number::New(env, static_cast<double>(v.num));
    case Value::Type::kList: {
      Napi::Array a = Napi::Array::New(env, v.items.size());
      for (size_t i = 0; i < v.items.size(); i++) a.Set(static_cast<uint32_t>(i), ToJs(env, v.items[i], kind));
      return a;
    }
    case Value::Type::kObject: {
      Napi::Object o = Napi::Object::New(env);
      if (kind == Kind::kExpr || kind == Kind::kExprList || kind == Kind::kObjData) {
        o.Set("type", v.str);
        if (!v.schema) {
          o.Set("raw", Napi::Buffer<uint8_t>::Copy(env, reinterpret_cast<const uint8_t*>(v.raw.data()), v.raw.size()));
          return o;
        }
      }
      return ObjectToJs(env, v, o);
    }
  }
  return env.Undefined();
}

Napi::Object MessageToJs(Napi::Env env, const Message& m) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("type", m.type->name);
  o.Set("family", m.family);
  o.Set("resId", m.res_id);
  o.Set("attrs", ObjectToJs(env, m.attrs, Napi::Object::New(env)));
  return o;
}

Request RequestFromJs(const Napi::Value& v, const std::string& path) {
  if (!v.IsObject() || v.IsArray()) TypeErr(v.Env(), path, "an object");
  Napi::Object o = v.As<Napi::Object>();
  Request r;
  const std::string type = StringFromJs(o.Get("type"), path + ".type");
  r.type = MessageByName(type.c_str());
  if (!r.type) throw Napi::TypeError::New(v.Env(), path + ".type '" + type + "' is not an nf_tables message");
  r.family = static_cast<uint8_t>(NumberFromJs(o.Get("family"), Kind::kU8, path + ".family"));
  if (o.Has("flags") && !o.Get("flags").IsUndefined())
    r.flags = static_cast<uint16_t>(NumberFromJs(o.Get("flags"), Kind::kBe16, path + ".flags"));
  Napi::Value attrs = o.Get("attrs");
  if (attrs.IsUndefined()) {
    r.attrs.type = Value::Type::kObject;
    r.attrs.schema = ObjectSchema(r.type->object);
  } else {
    r.attrs = ObjectFromJs(attrs, *ObjectSchema(r.type->object), path + ".attrs");
  }
  return r;
}

}  // namespace nft
