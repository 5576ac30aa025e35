/** The observable example: interceptors, metadata and deadline propagation, access log and metrics. */
@NullMarked
package io.petrel.examples.observable;

import org.jspecify.annotations.NullMarked;
