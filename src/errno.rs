// SPDX-License-Identifier: GPL-2.0
//! The errnos C zram answers refused input with: the pure parsers refuse with one type,
//! [`ParseError`], and its conversion here makes `?` turn a refusal into C's errno everywhere.

use crate::parse::ParseError;
use kernel::prelude::*;

/// A failed `kstrto*()` parse.
impl From<ParseError> for Error {
    fn from(error: ParseError) -> Self {
        match error {
            ParseError::Invalid => EINVAL,
            ParseError::Range => ERANGE,
        }
    }
}
