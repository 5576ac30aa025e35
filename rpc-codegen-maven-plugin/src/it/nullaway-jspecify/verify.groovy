def async = new File(basedir, 'target/generated-sources/petrel/it/ledger/LedgerAsync.java')
assert async.isFile() : "LedgerAsync.java was not generated"
assert async.text.contains('CompletableFuture<@Nullable Void> record(String name, long amount);')
def log = new File(basedir, 'build.log').text
// Invocation 1 compiled main code (generated sources included) with no NullAway error; invocation 2 failed on the
// misuse only, which shows NullAway ran in JSpecify mode and read the generated stub's @Nullable.
def errors = log.readLines().findAll { it.contains('[NullAway]') }
assert !errors.isEmpty() : "NullAway reported nothing: it did not run on the test sources"
assert errors.every { it.contains('Misuse.java') } : "NullAway errors outside Misuse.java:\n" + errors.join('\n')
assert errors.any { it.contains('dereferenced expression') } : errors.join('\n')
return true
