//! The neutral core: what every agent's session and every provider's cache reduce to, and the
//! helpers the stages share. Nothing here knows an agent's file format or a provider's API.

pub mod changes;
pub mod hash;
pub mod ids;
pub mod lines;
pub mod parallel;
pub mod request;
pub mod sanitize;
pub mod shared;
pub mod steps;
pub mod tokens;
pub mod usage;
pub mod volatile;
