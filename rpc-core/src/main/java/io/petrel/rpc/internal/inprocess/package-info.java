/**
 * The in-process transport: a server and its clients in one JVM, no socket, with the same statuses, limits,
 * deadlines and buffer discipline as the Netty transport. Selected with {@code RpcServer.builder().inProcess(name)}
 * and {@code RpcClient.builder().inProcess(name)}. Not API: anything here may change in any release.
 */
@NullMarked
package io.petrel.rpc.internal.inprocess;

import org.jspecify.annotations.NullMarked;
