#include "ofu/net/basic_auth.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <memory>

#include "ofu/platform/thread_name.h"

namespace ofu::net {
namespace {

using Digest = std::array<unsigned char, 32>;

// SHA-256 of the length-prefixed parts: the prefix keeps ("ab","c") and
// ("a","bc") apart.
Digest CacheKey(std::string_view user, std::string_view hash, std::string_view password) {
  std::string buffer;
  for (const std::string_view part : {user, hash, password}) {
    const auto size = static_cast<std::uint64_t>(part.size());
    buffer.append(reinterpret_cast<const char*>(&size), sizeof size);
    buffer.append(part);
  }
  Digest digest{};
  unsigned int length = 0;
  EVP_Digest(buffer.data(), buffer.size(), digest.data(), &length, EVP_sha256(), nullptr);
  OPENSSL_cleanse(buffer.data(), buffer.size());
  return digest;
}

// bcrypt of `password` with `hash` as setting, compared in constant time.
bool BcryptMatches(std::string_view password, const std::string& hash) {
  const std::string phrase(password);
  auto data = std::make_unique<crypt_data>();  // ~32 KiB: not on the stack
  const char* out = crypt_rn(phrase.c_str(), hash.c_str(), data.get(), static_cast<int>(sizeof(crypt_data)));
  bool match = false;
  if (out != nullptr && std::string_view(out).size() == hash.size()) {
    match = CRYPTO_memcmp(out, hash.data(), hash.size()) == 0;
  }
  OPENSSL_cleanse(data.get(), sizeof(crypt_data));
  return match;
}

}  // namespace

BasicAuthenticator::BasicAuthenticator(std::map<std::string, std::string> users) : users_(std::move(users)) {}

bool BasicAuthenticator::Check(std::string_view user, std::string_view password) {
  if (users_.empty()) return false;
  // crypt() reads a C string: "good\0junk" would pass as "good".
  if (password.find('\0') != std::string_view::npos) return false;
  const auto found = users_.find(std::string(user));
  const bool known = found != users_.end();
  // An unknown user costs a bcrypt too, against some configured hash, so
  // timing does not tell which users exist; the result is discarded.
  const std::string& hash = known ? found->second : users_.begin()->second;

  const Digest key = CacheKey(user, hash, password);
  {
    std::lock_guard lock(cache_mutex_);
    if (known && verified_.count(key) > 0) return true;
  }
  bool match = false;
  {
    std::lock_guard lock(bcrypt_mutex_);
    match = BcryptMatches(password, hash);
  }
  std::lock_guard lock(cache_mutex_);
  ++bcrypt_runs_;
  if (!known || !match) return false;
  // Bounded: a full cache is emptied, which costs one bcrypt per user later.
  if (verified_.size() >= kMaxCached) verified_.clear();
  verified_.insert(key);
  return true;
}

bool BasicAuthenticator::CheckCached(std::string_view user, std::string_view password) const {
  if (password.find('\0') != std::string_view::npos) return false;
  const auto found = users_.find(std::string(user));
  if (found == users_.end()) return false;
  const Digest key = CacheKey(user, found->second, password);
  std::lock_guard lock(cache_mutex_);
  return verified_.count(key) > 0;
}

std::size_t BasicAuthenticator::bcrypt_runs() const {
  std::lock_guard lock(cache_mutex_);
  return bcrypt_runs_;
}

std::optional<BasicCredentials> ParseBasicAuthorization(std::string_view header) {
  constexpr std::string_view kScheme = "basic";
  constexpr std::size_t kMaxToken = 4096;
  if (header.size() <= kScheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    const char c = header[i];
    if (static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c) != kScheme[i]) return std::nullopt;
  }
  std::string_view token = header.substr(kScheme.size());
  if (token.front() != ' ') return std::nullopt;
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
  if (token.empty() || token.size() > kMaxToken || token.size() % 4 != 0) return std::nullopt;

  // EVP_DecodeBlock accepts whitespace and does not report padding, so the
  // alphabet and the padding are checked here.
  std::size_t padding = 0;
  while (padding < 2 && token[token.size() - 1 - padding] == '=') ++padding;
  const auto is_base64 = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
  };
  if (!std::all_of(token.begin(), token.end() - static_cast<std::ptrdiff_t>(padding), is_base64)) {
    return std::nullopt;
  }
  std::string decoded(token.size() / 4 * 3, '\0');
  const int length = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(decoded.data()),
                                     reinterpret_cast<const unsigned char*>(token.data()),
                                     static_cast<int>(token.size()));
  if (length < 0 || static_cast<std::size_t>(length) < padding) return std::nullopt;
  decoded.resize(static_cast<std::size_t>(length) - padding);

  const std::size_t colon = decoded.find(':');
  if (colon == std::string::npos) return std::nullopt;
  return BasicCredentials{decoded.substr(0, colon), decoded.substr(colon + 1)};
}

AuthQueue::AuthQueue(BasicAuthenticator& authenticator, std::size_t max_queued, std::function<void()> wake)
    : authenticator_(authenticator), max_queued_(max_queued), wake_(std::move(wake)), thread_([this] { Run(); }) {}

AuthQueue::~AuthQueue() { Stop(); }

void AuthQueue::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool AuthQueue::Submit(std::uint64_t ticket, const BasicCredentials& credentials) {
  {
    std::lock_guard lock(mutex_);
    if (jobs_.size() >= max_queued_) return false;
    jobs_.push_back({ticket, credentials.user, credentials.password});
  }
  ready_.notify_one();
  return true;
}

std::vector<AuthQueue::Verdict> AuthQueue::TakeDone() {
  std::vector<Verdict> done;
  std::lock_guard lock(mutex_);
  done.swap(done_);
  return done;
}

void AuthQueue::Run() {
  platform::NameThisThread("ofu-http-auth");
  while (true) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    const bool ok = authenticator_.Check(job.user, job.password);
    std::fill(job.password.begin(), job.password.end(), '\0');
    {
      std::lock_guard lock(mutex_);
      done_.push_back({job.ticket, ok});
    }
    wake_();
  }
}

}  // namespace ofu::net
