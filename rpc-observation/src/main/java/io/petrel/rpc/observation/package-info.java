/**
 * Calls observed through Micrometer's Observation API, on Petrel's public interceptors: with Micrometer Tracing a
 * span per call on each side and the trace context in the request metadata. See docs/observability.md, "Tracing".
 * Nothing here is null unless marked {@code @Nullable}.
 */
@NullMarked
package io.petrel.rpc.observation;

import org.jspecify.annotations.NullMarked;
