/**
 * Petrel's Spring Boot auto-configuration: a server for the context's {@code @RpcService} beans, shared clients
 * and injectable stubs, health and metrics. See docs/spring-boot.md. Nothing here is null unless marked
 * {@code @Nullable}.
 */
@NullMarked
package io.petrel.spring.boot;

import org.jspecify.annotations.NullMarked;
