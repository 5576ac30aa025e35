/**
 * docs/getting-started.md's service and whole program, as the page shows them (a test holds the page to these
 * files, and runs the program).
 */
@NullMarked
package io.petrel.examples.start;

import org.jspecify.annotations.NullMarked;
