/** A null-marked package: FooAsync says CompletableFuture<@Nullable Void>, as a Void future completes with null. */
@NullMarked
package demo.marked;

import org.jspecify.annotations.NullMarked;
