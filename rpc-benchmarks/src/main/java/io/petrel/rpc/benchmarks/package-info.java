/** The JMH benchmarks, the benchmark server with its gRPC-java and raw Netty peers, and the report maker. */
@NullMarked
package io.petrel.rpc.benchmarks;

import org.jspecify.annotations.NullMarked;
