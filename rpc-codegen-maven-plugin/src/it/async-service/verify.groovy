def async = new File(basedir, 'target/generated-sources/petrel/it/quotes/QuotesAsync.java')
assert async.isFile() : "QuotesAsync.java was not generated"
assert async.text.contains('CompletableFuture<Integer> symbols();')
def report = new File(basedir, 'target/surefire-reports/TEST-it.quotes.QuotesTest.xml')
assert report.isFile() : "the IT's own tests did not run"
assert report.text.contains('tests="4"') && report.text.contains('failures="0"') && report.text.contains('errors="0"')
return true
