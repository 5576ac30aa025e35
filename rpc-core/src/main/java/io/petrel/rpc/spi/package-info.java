/** The transport SPI: what a transport implements (server transport, server calls, subchannels) and plugs into (name resolvers, load balancers). */
@NullMarked
package io.petrel.rpc.spi;

import org.jspecify.annotations.NullMarked;
