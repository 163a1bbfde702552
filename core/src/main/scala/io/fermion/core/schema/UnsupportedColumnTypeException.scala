package io.fermion.core.schema

/** A column's type cannot be stored in a Fermion file (yet). Raised while planning a write, before
  * any data is produced, and names the column so the user knows what to cast or drop. */
final class UnsupportedColumnTypeException(val column: String, val typeDescription: String, detail: String = "")
    extends IllegalArgumentException(
      s"Fermion cannot store column `$column` of type $typeDescription" + (if (detail.isEmpty) "" else s": $detail")
    )
