// The connection table (connections.h): the caps and whom they evict, and
// the deadlines, on time points the test chooses (no clock, no sockets:
// connections without a descriptor).
#include "ofu/net/connections.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace ofu::net {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const TimePoint kT0 = TimePoint() + std::chrono::hours(1);  // any fixed instant

std::vector<std::uint64_t> IdsOf(const std::vector<Connection*>& connections) {
  std::vector<std::uint64_t> ids;
  for (const Connection* c : connections) ids.push_back(c->id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST(ConnectionTable, AfterAddsFractionalSeconds) {
  EXPECT_EQ(After(kT0, 1.5), kT0 + milliseconds(1500));
  EXPECT_EQ(After(kT0, 0), kT0);
}

TEST(ConnectionTable, SweepTakesWhatIsDueAndSchedulesTheNextDeadlineNotSoonerThanTheInterval) {
  ConnectionTable table(2);
  Connection& a = table.Add(-1, "peer", kT0 + seconds(5));
  Connection& b = table.Add(-1, "peer", kT0 + seconds(1));
  table.Add(-1, "peer", kT0 + seconds(1) + milliseconds(10));
  EXPECT_EQ(a.id, 2u);
  EXPECT_EQ(table.next_sweep(), kT0 + seconds(1));

  // At 1 s only b is due; the next deadline is 10 ms away, but the next
  // sweep is kSweepInterval (50 ms) away.
  EXPECT_EQ(IdsOf(table.Sweep(kT0 + seconds(1))), std::vector<std::uint64_t>{b.id});
  EXPECT_EQ(table.next_sweep(), kT0 + seconds(1) + kSweepInterval);
  // Sweeping does not close: that is the loop's call.
  EXPECT_EQ(table.size(), 3u);
  table.Close(b);
  EXPECT_EQ(IdsOf(table.Sweep(kT0 + seconds(2))), std::vector<std::uint64_t>{4u});
  EXPECT_EQ(table.next_sweep(), kT0 + seconds(5));
}

TEST(ConnectionTable, NoDeadlineMeansNoSweepUnlessTheLoopWantsOne) {
  ConnectionTable table(2);
  Connection& c = table.Add(-1, "peer", kT0 + seconds(1));
  table.SetDeadline(c, TimePoint::max());  // e.g. authenticating
  EXPECT_TRUE(table.Sweep(kT0 + seconds(2)).empty());
  EXPECT_EQ(table.next_sweep(), TimePoint::max());  // an idle server sleeps
  table.Sweep(kT0 + seconds(2), kT0 + seconds(3));  // the accept pause ends at 3 s
  EXPECT_EQ(table.next_sweep(), kT0 + seconds(3));
}

TEST(ConnectionTable, PerPeerCapEvictsThatPeersOldestWaitingConnection) {
  ConnectionTable table(2);
  Connection& first = table.Add(-1, "a", TimePoint::max());
  Connection& second = table.Add(-1, "a", TimePoint::max());
  table.Add(-1, "b", TimePoint::max());
  EXPECT_FALSE(table.MakeRoom("a", 3, 10).reason);  // below both caps

  ConnectionTable::Room room = table.MakeRoom("a", 2, 10);
  ASSERT_TRUE(room.reason);
  EXPECT_EQ(*room.reason, ConnectionRejection::kPerPeerLimit);
  EXPECT_EQ(room.evict, &first);
  // Being answered, a connection is not waiting and is never evicted.
  table.LeaveWaiting(first);
  EXPECT_EQ(table.MakeRoom("a", 2, 10).evict, &second);
  table.LeaveWaiting(second);
  room = table.MakeRoom("a", 2, 10);
  EXPECT_EQ(room.evict, nullptr);  // refuse the newcomer
  EXPECT_EQ(*room.reason, ConnectionRejection::kPerPeerLimit);
  // Back to waiting, it is the newest of its peer's waiting list.
  table.EnterWaiting(first);
  table.EnterWaiting(second);
  EXPECT_EQ(table.MakeRoom("a", 2, 10).evict, &first);
}

TEST(ConnectionTable, TotalCapEvictsFromThePeerWithTheMostConnections) {
  ConnectionTable table(2);
  Connection& scraper = table.Add(-1, "scraper", TimePoint::max());
  Connection& attacker1 = table.Add(-1, "attacker", TimePoint::max());
  table.Add(-1, "attacker", TimePoint::max());
  ConnectionTable::Room room = table.MakeRoom("new", 32, 3);
  ASSERT_TRUE(room.reason);
  EXPECT_EQ(*room.reason, ConnectionRejection::kTotalLimit);
  EXPECT_EQ(room.evict, &attacker1);  // not the scraper, though it is older
  table.Close(attacker1);
  EXPECT_EQ(table.size(), 2u);
  EXPECT_FALSE(table.MakeRoom("new", 32, 3).reason);
  // Equal counts: the oldest waiting one of them.
  EXPECT_EQ(table.MakeRoom("new", 32, 2).evict, &scraper);
}

TEST(ConnectionTable, ClosedConnectionsLeaveTheTableButStayValidUntilReleased) {
  ConnectionTable table(2);
  Connection& c = table.Add(-1, "a", kT0);
  const std::uint64_t id = c.id;
  table.Close(c);
  EXPECT_TRUE(c.closed);  // still readable: parked
  EXPECT_EQ(table.Find(id), nullptr);
  EXPECT_EQ(table.open_connections(), 0u);
  EXPECT_FALSE(table.MakeRoom("a", 1, 1).reason);  // its peer's count went with it
  table.ReleaseClosed();
  EXPECT_EQ(table.Add(-1, "a", kT0).id, id + 1);  // ids are never reused
}

sockaddr_storage V4(const char* text) {
  sockaddr_storage storage{};
  auto& v4 = reinterpret_cast<sockaddr_in&>(storage);
  v4.sin_family = AF_INET;
  inet_pton(AF_INET, text, &v4.sin_addr);
  return storage;
}

sockaddr_storage V6(const char* text) {
  sockaddr_storage storage{};
  auto& v6 = reinterpret_cast<sockaddr_in6&>(storage);
  v6.sin6_family = AF_INET6;
  inet_pton(AF_INET6, text, &v6.sin6_addr);
  return storage;
}

TEST(PeerKeyOf, Ipv4MappedIsTheIpv4AddressAndIpv6CountsPerSlash64) {
  EXPECT_EQ(PeerKeyOf(V4("10.0.0.1")), PeerKeyOf(V6("::ffff:10.0.0.1")));
  EXPECT_NE(PeerKeyOf(V4("10.0.0.1")), PeerKeyOf(V4("10.0.0.2")));
  EXPECT_EQ(PeerKeyOf(V6("2001:db8:1:2::1")), PeerKeyOf(V6("2001:db8:1:2:ffff::9")));
  EXPECT_NE(PeerKeyOf(V6("2001:db8:1:2::1")), PeerKeyOf(V6("2001:db8:1:3::1")));
}

TEST(Listen, PortZeroBindsAFreePortAndABadAddressIsNamed) {
  auto fd = Listen("127.0.0.1", 0);
  ASSERT_TRUE(fd.ok()) << fd.error().message;
  EXPECT_GT(BoundPort(*fd), 0);
  ::close(*fd);
  auto bad = Listen("no-such-host.invalid", 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("cannot listen on no-such-host.invalid:0"), std::string::npos);
}

}  // namespace
}  // namespace ofu::net
