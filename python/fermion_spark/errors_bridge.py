"""Turns a JVM exception raised through Py4J (or PySpark's captured form of it) into a one-line
FermionToolError."""


def call(fn):
    from fermion_spark.tools import FermionToolError
    try:
        return fn()
    except Exception as e:
        java = getattr(e, "java_exception", None)
        if java is not None:  # py4j.protocol.Py4JJavaError
            raise FermionToolError(f"{java.getClass().getSimpleName()}: {java.getMessage()}") from None
        if type(e).__module__.startswith("pyspark.errors"):  # PySpark's captured JVM exceptions
            desc = getattr(e, "desc", None) or str(e)
            raise FermionToolError(f"{type(e).__name__}: {desc.splitlines()[0] if desc else e}") from None
        raise
