/** What generated stubs and dispatchers call; stable for generated code. */
@NullMarked
package io.petrel.rpc.stub;

import org.jspecify.annotations.NullMarked;
