/**
 * The DNS name resolver: {@code RpcClient.builder().target("dns:///greeter.default.svc.cluster.local:7000")} calls
 * every address (A and AAAA records) the name has, looked up again on a period and when a connection is lost.
 */
@NullMarked
package io.petrel.rpc.dns;

import org.jspecify.annotations.NullMarked;
