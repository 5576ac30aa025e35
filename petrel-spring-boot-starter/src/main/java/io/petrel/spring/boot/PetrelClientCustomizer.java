package io.petrel.spring.boot;

import io.petrel.rpc.RpcClientBuilder;

/**
 * Changes the builder of the client {@code petrel.clients.<name>} after the properties are applied (a
 * {@code callbackExecutor}, a {@code NameResolver}, transport options). Beans of this type run in their
 * {@code @Order}, for every client. An option a customizer sets replaces the property's: its {@code endpointFilter}
 * replaces the one of {@code petrel.clients.<name>.endpoint-filter.*} (to keep both, combine them:
 * {@link PropertiesEndpointFilter#of}, {@link PropertiesEndpointFilter#and}).
 */
@FunctionalInterface
public interface PetrelClientCustomizer {
  void customize(String name, RpcClientBuilder builder);
}
