package io.petrel.spring.boot;

import io.petrel.rpc.RpcServerBuilder;

/**
 * Changes the auto-configured server's builder after the properties are applied: options that have no property
 * (an {@code executor}, transport options such as {@code NettyOptions}, extra services). Beans of this type run in
 * their {@code @Order}.
 */
@FunctionalInterface
public interface PetrelServerCustomizer {
  void customize(RpcServerBuilder builder);
}
