/**
 * docs/migrating-from-grpc.md's worked port of a gRPC service, as the page shows it (a test holds the page to these
 * files, and runs them over TLS).
 */
@NullMarked
package io.petrel.examples.grpcport;

import org.jspecify.annotations.NullMarked;
