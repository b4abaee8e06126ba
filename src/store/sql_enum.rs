//! Enums stored as text: one table per enum gives `as_str`, `ToSql` and a
//! strict `FromSql` (an unknown value is an error, never a silent default).

/// `sql_enum!(Status { Pending => "pending", ... })` for an enum declared beside it.
macro_rules! sql_enum {
    ($ty:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        impl $ty {
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $text,)+
                }
            }

            /// The value for its stored text; None for text this build does not know.
            pub fn from_db(s: &str) -> Option<Self> {
                match s {
                    $($text => Some($ty::$variant),)+
                    _ => None,
                }
            }
        }

        impl rusqlite::types::ToSql for $ty {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                Ok(rusqlite::types::ToSqlOutput::from(self.as_str()))
            }
        }

        impl rusqlite::types::FromSql for $ty {
            fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
                let s = v.as_str()?;
                $ty::from_db(s).ok_or_else(|| {
                    rusqlite::types::FromSqlError::Other(
                        format!("unknown {} value {:?} in the database", stringify!($ty), s).into(),
                    )
                })
            }
        }
    };
}

pub(crate) use sql_enum;
