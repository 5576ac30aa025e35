package io.petrel.rpc.registry.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/**
 * The hosts a node may give: every real-world spelling of an address is taken, in one spelling per address (so
 * that two spellings of one server are one endpoint), and what cannot be an address is refused saying why.
 */
class RegistryNodeHostTest {
  @Test
  void realWorldHostsAreTakenInOneSpellingPerAddress() {
    assertThat(RegistryNode.checkHost("127.0.0.1")).isEqualTo("127.0.0.1");
    assertThat(RegistryNode.checkHost("10.1.0.1")).isEqualTo("10.1.0.1");
    assertThat(RegistryNode.checkHost("::ffff:10.0.0.1")).isEqualTo("10.0.0.1"); // IPv4-mapped: one address
    // IPv6 with or without brackets (the bracketed form was taken before the node checks, and refused by them).
    assertThat(RegistryNode.checkHost("::1")).isEqualTo("0:0:0:0:0:0:0:1");
    assertThat(RegistryNode.checkHost("[::1]")).isEqualTo("0:0:0:0:0:0:0:1");
    assertThat(RegistryNode.checkHost("0:0::0001")).isEqualTo("0:0:0:0:0:0:0:1");
    assertThat(RegistryNode.checkHost("2001:DB8::1")).isEqualTo("2001:db8:0:0:0:0:0:1");
    // A scope id is kept as written: whether it names an interface depends on the client's machine.
    assertThat(RegistryNode.checkHost("fe80::1%lo")).isEqualTo("fe80:0:0:0:0:0:0:1%lo");
    assertThat(RegistryNode.checkHost("fe80::1%eth0")).isEqualTo("fe80:0:0:0:0:0:0:1%eth0");
    // Host names: case does not make another address (a trailing dot does: an absolute name); dashes,
    // underscores, an internationalised name as its A-label.
    assertThat(RegistryNode.checkHost("Greeter-1.Example.COM")).isEqualTo("greeter-1.example.com");
    assertThat(RegistryNode.checkHost("greeter.example.com.")).isEqualTo("greeter.example.com.");
    assertThat(RegistryNode.checkHost("svc_a.default.svc")).isEqualTo("svc_a.default.svc");
    assertThat(RegistryNode.checkHost("xn--bcher-kva.example")).isEqualTo("xn--bcher-kva.example");
  }

  /**
   * A registrar does not advertise an address only this machine can use: an IPv6 address with a scope id (it names
   * one of this machine's interfaces) or a link-local one (clients would need a scope of their own). Before,
   * {@code fe80::1%eth0} was registered as is. Clients still read such a node (another tool may write it for a
   * client on the same machine).
   */
  @Test
  void aRegistrarRefusesAnAddressOnlyThisMachineCanUse() {
    try (ZooKeeperRegistry registry = ZooKeeperRegistry.builder().connectString("127.0.0.1:1").build()) {
      ZooKeeperRegistrar.Builder b = registry.registrar(Greeters.SERVICE);
      assertThatThrownBy(() -> b.host("fe80::1%eth0")).isInstanceOf(IllegalArgumentException.class)
          .hasMessage("host fe80:0:0:0:0:0:0:1%eth0 is an IPv6 address with a scope id (%eth0), which names an"
              + " interface of this machine: clients on other machines cannot use it; advertise a global address or"
              + " a host name that clients on other machines can use");
      assertThatThrownBy(() -> b.host("[fe80::1%2]")).hasMessageContaining("with a scope id (%2)");
      assertThatThrownBy(() -> b.host("fe80::1")).isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("host fe80:0:0:0:0:0:0:1 is a link-local IPv6 address (fe80::/10)");
      // A global address with a scope id too: the scope names an interface of this machine, which a client
      // elsewhere does not have ("no such interface eth0") or takes for one of its own (a numeric scope).
      assertThatThrownBy(() -> b.host("2001:db8::7%eth0")).isInstanceOf(IllegalArgumentException.class)
          .hasMessage("host 2001:db8:0:0:0:0:0:7%eth0 is an IPv6 address with a scope id (%eth0), which names an"
              + " interface of this machine: clients on other machines cannot use it; advertise a global address or"
              + " a host name that clients on other machines can use");
      assertThatThrownBy(() -> b.host("[2001:db8::7%3]")).hasMessageContaining("with a scope id (%3)");
      b.host("2001:db8::7").host("::1").host("10.0.0.7").host("greeter.example.com"); // taken
    }
    assertThat(RegistryNode.checkHost("fe80::1%eth0")).as("a client still reads it")
        .isEqualTo("fe80:0:0:0:0:0:0:1%eth0");
  }

  /**
   * An address only this machine can use that the registrar found itself, with no {@code host(...)} set, is refused
   * with an ERROR that says where it came from and what to set instead: this host's address as
   * {@code InetAddress.getLocalHost()} gives it (the server listens on all addresses), or the address the server is
   * bound to. Before, the ERROR said the same ("Set ZooKeeperRegistrar.Builder.host(...)") whichever it was, and
   * not that the registrar had picked the address. The text is the ERROR's after "not registering [...] in
   * ZooKeeper: ".
   */
  @Test
  void anAddressTheRegistrarFoundItselfIsRefusedSayingWhereItCameFromAndWhatToSet() throws Exception {
    InetSocketAddress allAddresses = new InetSocketAddress(7000); // the wildcard address: nothing is bound here
    InetAddress linkLocal = InetAddress.getByName("fe80::1"); // a literal: parsed, never looked up
    ZooKeeperRegistrar.Advertised fromLocalHost =
        ZooKeeperRegistrar.hostToAdvertise(null, allAddresses, () -> linkLocal);
    assertThat(fromLocalHost.host()).isNull();
    assertThat(fromLocalHost.refused()).isEqualTo("the host to advertise, fe80:0:0:0:0:0:0:1, is a link-local IPv6"
        + " address (fe80::/10), which clients can use only with the scope id of an interface of their own machine."
        + " It is this host's address as InetAddress.getLocalHost() gives it, which the registrar advertises when the"
        + " server listens on all addresses and no host is set on it: set the address clients should use with"
        + " ZooKeeperRegistrar.Builder.host(...) (registry.registrar(...).host(\"10.0.0.7\")), a global address or a"
        + " host name clients on other machines can use, or map this host's name to such an address (DNS,"
        + " /etc/hosts)");
    // As InetAddress.getLocalHost() may give it: with the scope of the interface it was found on.
    InetAddress scoped = Inet6Address.getByAddress(null, linkLocal.getAddress(), 2);
    assertThat(ZooKeeperRegistrar.hostToAdvertise(null, allAddresses, () -> scoped).refused())
        .startsWith("the host to advertise, fe80:0:0:0:0:0:0:1%2, is an IPv6 address with a scope id (%2)")
        .contains(". It is this host's address as InetAddress.getLocalHost() gives it",
            "ZooKeeperRegistrar.Builder.host(...)");

    ZooKeeperRegistrar.LocalHost notAsked = () -> {
      throw new AssertionError("this host's address is looked up only for a server listening on all addresses");
    };
    ZooKeeperRegistrar.Advertised fromBind =
        ZooKeeperRegistrar.hostToAdvertise(null, new InetSocketAddress(linkLocal, 7000), notAsked);
    assertThat(fromBind.host()).isNull();
    assertThat(fromBind.refused()).isEqualTo("the host to advertise, fe80:0:0:0:0:0:0:1, is a link-local IPv6"
        + " address (fe80::/10), which clients can use only with the scope id of an interface of their own machine."
        + " It is the address the server is bound to (RpcServer.builder().bindAddress(...)), which the registrar"
        + " advertises when no host is set on it: bind the server to an address clients on other machines can use,"
        + " or to all addresses (RpcServer.builder().port(...)) and set that address with"
        + " ZooKeeperRegistrar.Builder.host(...)");

    // A global address with a scope id, as the server is bound to it (or getLocalHost() gives it): refused too.
    InetAddress globalScoped = Inet6Address.getByAddress(null, InetAddress.getByName("2001:db8::7").getAddress(), 3);
    ZooKeeperRegistrar.Advertised boundScoped =
        ZooKeeperRegistrar.hostToAdvertise(null, new InetSocketAddress(globalScoped, 7000), notAsked);
    assertThat(boundScoped.host()).isNull();
    assertThat(boundScoped.refused()).isEqualTo("the host to advertise, 2001:db8:0:0:0:0:0:7%3, is an IPv6 address"
        + " with a scope id (%3), which names an interface of this machine: clients on other machines cannot use it. "
        + ZooKeeperRegistrar.FROM_BOUND_ADDRESS);
    assertThat(ZooKeeperRegistrar.hostToAdvertise(null, allAddresses, () -> globalScoped).refused())
        .isEqualTo("the host to advertise, 2001:db8:0:0:0:0:0:7%3, is an IPv6 address with a scope id (%3), which"
            + " names an interface of this machine: clients on other machines cannot use it. "
            + ZooKeeperRegistrar.FROM_LOCAL_HOST);

    // Taken: an address others can use, found either way, and a host set on the registrar (checked by host(...)).
    InetAddress global = InetAddress.getByName("10.0.0.7");
    assertThat(ZooKeeperRegistrar.hostToAdvertise(null, allAddresses, () -> global).host()).isEqualTo("10.0.0.7");
    assertThat(ZooKeeperRegistrar.hostToAdvertise(null, new InetSocketAddress(global, 7000), notAsked).host())
        .isEqualTo("10.0.0.7");
    assertThat(ZooKeeperRegistrar.hostToAdvertise("2001:db8:0:0:0:0:0:7", allAddresses, notAsked).host())
        .isEqualTo("2001:db8:0:0:0:0:0:7");
  }

  /** A node's name is its data's host:port, the host in any spelling of the same address; else it is skipped. */
  @Test
  void aNodesNameMustBeTheAddressItsDataLists() {
    io.petrel.rpc.Endpoint v6 = io.petrel.rpc.Endpoint.of("0:0:0:0:0:0:0:1", 7000);
    io.petrel.rpc.Endpoint v4 = io.petrel.rpc.Endpoint.of("10.0.0.7", 7000);
    io.petrel.rpc.Endpoint name = io.petrel.rpc.Endpoint.of("greeter.example.com", 7000);
    assertThat(RegistryNode.nameMismatch("[0:0:0:0:0:0:0:1]:7000", v6)).isNull();
    assertThat(RegistryNode.nameMismatch("[::1]:7000", v6)).isNull();
    assertThat(RegistryNode.nameMismatch("10.0.0.7:7000", v4)).isNull();
    assertThat(RegistryNode.nameMismatch("Greeter.Example.COM:7000", name)).isNull();
    for (String other : new String[] {"10.0.0.8:7000", "10.0.0.7:7001", "10.0.0.7:07000", "10.0.0.7", "junk",
        "[10.0.0.7]:7000", "10.0.0.7:", ":7000", "10.0.0.7:70000000000"}) {
      assertThat(RegistryNode.nameMismatch(other, v4)).as(other)
          .startsWith("its name '" + other + "' is not the address its data lists, 10.0.0.7:7000");
    }
    assertThat(RegistryNode.nameMismatch("::1:7000", v6)).as("unbracketed").isNotNull();
  }

  @Test
  void whatCannotBeAnAddressIsRefusedSayingWhy() {
    for (String bad : new String[] {"not an address", "999.1.2.3", "1.2.3", "http://h:1", "::g", "[::1", "fe80::1%",
        "fe80::1%a b", "-leading.example", "a..b", "010.1.1.1", "[1.2.3.4]", "[example.com]", "bücher.example",
        "x\u200Dy.com"}) {
      assertThatThrownBy(() -> RegistryNode.checkHost(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("field 'host' is ");
    }
  }
}
