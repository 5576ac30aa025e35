/** Marshallers: protobuf messages, scalar and collection arguments, opaque bytes. */
@NullMarked
package io.petrel.rpc.marshal;

import org.jspecify.annotations.NullMarked;
