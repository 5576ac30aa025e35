def rpc = new File(basedir, 'target/generated-sources/petrel/it/catalog/CatalogRpc.java')
assert rpc.isFile() : "CatalogRpc.java was not generated"
assert rpc.text.contains('FieldCodecs.mapOf(FieldCodecs.enumOf(Color.class))')
assert rpc.text.contains('FieldCodecs.listOf(FieldCodecs.message(Timestamp.getDefaultInstance()))')
def report = new File(basedir, 'target/surefire-reports/TEST-it.catalog.CatalogTest.xml')
assert report.isFile() : "the IT's own tests did not run"
assert report.text.contains('tests="5"') && report.text.contains('failures="0"') && report.text.contains('errors="0"')
return true
