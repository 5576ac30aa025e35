/** Null-marked, as the project's own packages are. */
@NullMarked
package it.ledger;

import org.jspecify.annotations.NullMarked;
