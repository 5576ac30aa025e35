/**
 * The Netty transport of Petrel. Only {@link io.petrel.rpc.transport.netty.NettyTransportProvider} is public,
 * for ServiceLoader; everything else is internal and may change in any release.
 */
package io.petrel.rpc.transport.netty;
