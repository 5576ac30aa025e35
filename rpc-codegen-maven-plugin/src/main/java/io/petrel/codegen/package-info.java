/** The Maven plugin that generates client stubs and server dispatchers from @RpcService interfaces. */
@NullMarked
package io.petrel.codegen;

import org.jspecify.annotations.NullMarked;
