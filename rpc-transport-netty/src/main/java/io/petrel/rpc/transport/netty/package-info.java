/**
 * The Netty transport of Petrel. Only {@link io.petrel.rpc.transport.netty.NettyTransportProvider} is public,
 * for ServiceLoader; everything else is internal and may change in any release.
 */
@NullMarked
package io.petrel.rpc.transport.netty;

import org.jspecify.annotations.NullMarked;
