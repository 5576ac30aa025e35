def log = new File(basedir, 'build.log').text
def file = new File(basedir, 'src/main/java/it/shapes/Shapes.java').canonicalPath
assert log.contains('Petrel codegen found 2 problems in @RpcService interfaces:') : log
assert log.contains(file + ':10: parameter corner of area has unsupported type Point: define a protobuf message for it') : log
assert log.contains(file + ':12: return type of names has unsupported type Set<String>: use List<T> (a repeated field)') : log
assert !new File(basedir, 'target/generated-sources/petrel/it/shapes/ShapesRpc.java').exists()
return true
