// SPDX-License-Identifier: GPL-2.0
//! The errnos C zram answers refused input with: the pure parsers refuse with one type,
//! [`ParseError`], and its conversion here makes `?` turn a refusal into C's errno everywhere.
//! A refused compression unit (`compress_unit`, zram_rs's own) is `EINVAL` whatever the reason.

use crate::parse::ParseError;
use crate::unit::Refusal;
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

/// A refused `compress_unit` write.
impl From<Refusal> for Error {
    fn from(_: Refusal) -> Self {
        EINVAL
    }
}
