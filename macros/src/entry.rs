//! Parsing of the attribute arguments and expansion of the function.
//!
//! Everything works on `proc_macro2` tokens so that the unit tests below can
//! run the expansion and read its error messages directly (a `compile_fail`
//! doctest only proves that *something* failed).

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ItemFn, Lit, Meta, ReturnType, Token, Type};

/// Which attribute is expanding.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Main,
    Test,
}

impl Kind {
    fn attribute(self) -> &'static str {
        match self {
            Kind::Main => "#[tempo::main]",
            Kind::Test => "#[tempo::test]",
        }
    }
}

/// The names accepted, for error messages.
const VALID_ARGUMENTS: &str = "`max_throttling`, `timer_policy`, `start_paused`, `flavor`, `crate`";

/// The bounds of `Builder::max_throttling`, in microseconds.
const MIN_THROTTLING_US: u64 = 1_000;
const MAX_THROTTLING_US: u64 = 1_000_000;

/// What the arguments ask of the runtime builder.
#[derive(Default)]
struct Config {
    max_throttling_us: Option<u64>,
    /// `true` for `never_early`.
    never_early: Option<bool>,
    start_paused: Option<bool>,
    crate_path: Option<syn::Path>,
    flavor_seen: bool,
}

/// Expands the attribute, or, on error, a compile error plus a plain
/// (non-async) version of the function so that the error is the only one
/// the user sees (no "`main` function not found" on top).
pub(crate) fn expand(kind: Kind, args: TokenStream, item: TokenStream) -> TokenStream {
    let input: ItemFn = match syn::parse2(item.clone()) {
        Ok(input) => input,
        Err(error) => {
            let mut tokens = item;
            tokens.extend(error.into_compile_error());
            return tokens;
        }
    };
    match parse_config(kind, &input, args) {
        Ok(config) => generate(kind, input, &config),
        Err(error) => recovery(input, error),
    }
}

fn parse_config(kind: Kind, input: &ItemFn, args: TokenStream) -> syn::Result<Config> {
    if input.sig.asyncness.is_none() {
        return Err(syn::Error::new(
            input.sig.fn_token.span,
            format!(
                "the `async` keyword is missing from the function declaration: {} runs an `async fn`",
                kind.attribute()
            ),
        ));
    }
    if !input.sig.inputs.is_empty() {
        let what = match kind {
            Kind::Main => "the main function cannot take arguments",
            Kind::Test => "a test function cannot take arguments",
        };
        return Err(syn::Error::new_spanned(&input.sig.inputs, what));
    }
    if let Some(param) = input.sig.generics.params.first() {
        return Err(syn::Error::new_spanned(
            param,
            format!("{} cannot be used on a generic function", kind.attribute()),
        ));
    }
    if kind == Kind::Test {
        if let Some(attr) = input.attrs.iter().find(|a| a.path().is_ident("test")) {
            return Err(syn::Error::new_spanned(
                attr,
                "a second `#[test]` attribute: #[tempo::test] already makes this a test",
            ));
        }
    }

    let args = Punctuated::<Meta, Token![,]>::parse_terminated.parse2(args)?;
    let mut config = Config::default();
    for arg in args {
        let name_value = match arg {
            Meta::NameValue(nv) => nv,
            other => {
                let name = other.path().to_token_stream().to_string();
                return Err(syn::Error::new_spanned(
                    other,
                    format!(
                        "expected `name = value` for `{name}`; the arguments are {VALID_ARGUMENTS}"
                    ),
                ));
            }
        };
        let name = name_value
            .path
            .get_ident()
            .map(|ident| ident.to_string())
            .unwrap_or_else(|| name_value.path.to_token_stream().to_string());
        let value = &name_value.value;
        match name.as_str() {
            "max_throttling" => {
                set_once(&mut config.max_throttling_us, &name_value, || {
                    parse_throttling(value)
                })?;
            }
            "timer_policy" => {
                set_once(&mut config.never_early, &name_value, || {
                    let (text, span) = string_value(value, "timer_policy")?;
                    match text.as_str() {
                        "nearest_tick" => Ok(false),
                        "never_early" => Ok(true),
                        _ => Err(syn::Error::new(
                            span,
                            format!(
                                "unknown timer_policy {text:?}: expected \"nearest_tick\" (the \
                                 default) or \"never_early\""
                            ),
                        )),
                    }
                })?;
            }
            "start_paused" => {
                set_once(&mut config.start_paused, &name_value, || match value {
                    Expr::Lit(ExprLit {
                        lit: Lit::Bool(b), ..
                    }) => Ok(b.value),
                    other => Err(syn::Error::new_spanned(
                        other,
                        "start_paused takes `true` or `false`",
                    )),
                })?;
            }
            "flavor" => {
                if config.flavor_seen {
                    return Err(twice(&name_value));
                }
                config.flavor_seen = true;
                let (text, span) = string_value(value, "flavor")?;
                if text != "current_thread" {
                    return Err(syn::Error::new(
                        span,
                        format!(
                            "flavor {text:?} is not available: a Tempo runtime runs every task \
                             on one thread, so the only flavor is \"current_thread\" (scale out \
                             with several runtimes or contexts)"
                        ),
                    ));
                }
            }
            "crate" => {
                set_once(&mut config.crate_path, &name_value, || {
                    let (text, span) = string_value(value, "crate")?;
                    syn::parse_str::<syn::Path>(&text).map_err(|_| {
                        syn::Error::new(span, format!("crate = {text:?} is not a path"))
                    })
                })?;
            }
            "worker_threads" => {
                return Err(syn::Error::new_spanned(
                    &name_value,
                    "worker_threads is not available: a Tempo runtime runs every task on one \
                     thread (scale out with several runtimes or contexts)",
                ));
            }
            _ => {
                return Err(syn::Error::new_spanned(
                    &name_value.path,
                    format!("unknown argument `{name}`: the arguments are {VALID_ARGUMENTS}"),
                ));
            }
        }
    }
    Ok(config)
}

/// Stores the value parsed by `parse` in `slot`, unless it is already set.
fn set_once<T>(
    slot: &mut Option<T>,
    arg: &syn::MetaNameValue,
    parse: impl FnOnce() -> syn::Result<T>,
) -> syn::Result<()> {
    if slot.is_some() {
        return Err(twice(arg));
    }
    *slot = Some(parse()?);
    Ok(())
}

fn twice(arg: &syn::MetaNameValue) -> syn::Error {
    syn::Error::new_spanned(
        arg,
        format!(
            "`{}` is given twice",
            arg.path.to_token_stream().to_string().replace(' ', "")
        ),
    )
}

fn string_value(value: &Expr, name: &str) -> syn::Result<(String, Span)> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok((s.value(), s.span())),
        other => Err(syn::Error::new_spanned(
            other,
            format!("{name} takes a string literal, e.g. {name} = \"...\""),
        )),
    }
}

/// Parses `"20ms"`, `"1s"` or `"500us"` into microseconds, within the
/// builder's accepted range.
fn parse_throttling(value: &Expr) -> syn::Result<u64> {
    const FORMAT: &str = "max_throttling takes a duration string such as \"20ms\", \"1s\" or \
                          \"500us\" (from 1ms to 1s)";
    let (text, span) = match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => (s.value(), s.span()),
        other => return Err(syn::Error::new_spanned(other, FORMAT)),
    };
    let trimmed = text.trim();
    let digits_end = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(digits_end);
    let scale = match unit.trim() {
        "us" => 1,
        "ms" => 1_000,
        "s" => 1_000_000,
        _ => return Err(syn::Error::new(span, FORMAT)),
    };
    let micros = number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .ok_or_else(|| syn::Error::new(span, FORMAT))?;
    if !(MIN_THROTTLING_US..=MAX_THROTTLING_US).contains(&micros) {
        return Err(syn::Error::new(
            span,
            format!(
                "max_throttling = {text:?} is out of range: the period goes from 1ms to 1s \
                 (omit max_throttling for the basic scheduler)"
            ),
        ));
    }
    Ok(micros)
}

fn generate(kind: Kind, mut input: ItemFn, config: &Config) -> TokenStream {
    let tempo = config
        .crate_path
        .as_ref()
        .map(|path| path.to_token_stream())
        .unwrap_or_else(|| quote!(::tempo));
    let throttling = config
        .max_throttling_us
        .map(|us| quote!(.max_throttling(::core::time::Duration::from_micros(#us))));
    let policy = config.never_early.map(|never_early| {
        if never_early {
            quote!(.timer_policy(#tempo::runtime::TimerPolicy::NeverEarly))
        } else {
            quote!(.timer_policy(#tempo::runtime::TimerPolicy::NearestTick))
        }
    });
    let paused = config
        .start_paused
        .map(|paused| quote!(.start_paused(#paused)));

    // The future's output type, named so that `?` in the body infers its
    // error type from the function's return type. `impl Trait` and `!`
    // cannot be named there; those bodies are left to inference.
    let coerce = match &input.sig.output {
        ReturnType::Default => Some(quote!(())),
        ReturnType::Type(_, ty) if nameable(ty) => Some(ty.to_token_stream()),
        ReturnType::Type(..) => None,
    }
    .map(|output| {
        quote! {
            let body = ::core::pin::pin!(body);
            let body: ::core::pin::Pin<&mut dyn ::core::future::Future<Output = #output>> = body;
        }
    });

    // All generated tokens share the call-site span: `body` must resolve
    // to the same binding in every piece, also when the attribute itself
    // comes from a `macro_rules!` expansion.
    let block = &input.block;
    let body = quote! {
        {
            let body = async move #block;
            #coerce
            #[allow(clippy::expect_used, clippy::needless_return)]
            {
                return #tempo::runtime::Builder::new_current_thread()
                    .enable_all()
                    #throttling
                    #policy
                    #paused
                    .build()
                    .expect("failed to build the Tempo runtime")
                    .block_on(body);
            }
        }
    };
    input.sig.asyncness = None;
    *input.block = syn::parse_quote!(#body);
    let test_attr = (kind == Kind::Test).then(|| quote!(#[::core::prelude::v1::test]));
    quote! {
        #test_attr
        #input
    }
}

/// `true` if the type can be written as a `dyn Future`'s output.
fn nameable(ty: &Type) -> bool {
    match ty {
        Type::Never(_) | Type::ImplTrait(_) | Type::Infer(_) => false,
        other => !other
            .to_token_stream()
            .into_iter()
            .any(|t| matches!(&t, proc_macro2::TokenTree::Ident(i) if i == "impl")),
    }
}

/// The error, plus the function made synchronous with a body that never
/// runs (it is never compiled into a program: the error stops the build).
fn recovery(mut input: ItemFn, error: syn::Error) -> TokenStream {
    input.sig.asyncness = None;
    let span = input.block.span();
    *input.block = syn::parse_quote_spanned! {span=>
        { ::core::unreachable!("this function did not compile") }
    };
    let error = error.into_compile_error();
    quote! {
        #error
        #[allow(dead_code)]
        #input
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The message of the `compile_error!` that an expansion produced.
    fn error_of(kind: Kind, args: &str, item: &str) -> String {
        let out = expand(kind, args.parse().unwrap(), item.parse().unwrap()).to_string();
        let start = out
            .find("compile_error")
            .unwrap_or_else(|| panic!("no compile error in {out}"));
        let rest = &out[start..];
        let open = rest.find('"').unwrap() + 1;
        let close = rest.find("\" }").unwrap();
        rest[open..close].replace("\\\"", "\"")
    }

    fn expansion(kind: Kind, args: &str, item: &str) -> String {
        let out = expand(kind, args.parse().unwrap(), item.parse().unwrap()).to_string();
        assert!(!out.contains("compile_error"), "unexpected error: {out}");
        out
    }

    const MAIN: &str = "async fn main() { run().await }";

    #[test]
    fn default_main_builds_the_basic_scheduler() {
        let out = expansion(Kind::Main, "", MAIN);
        assert!(out.contains(":: tempo :: runtime :: Builder :: new_current_thread ()"));
        assert!(out.contains("enable_all ()"));
        assert!(!out.contains("max_throttling"));
        assert!(!out.contains("# [:: core :: prelude :: v1 :: test]"));
        assert!(!out.contains("async fn"));
    }

    #[test]
    fn every_argument_reaches_the_builder() {
        let out = expansion(
            Kind::Test,
            r#"flavor = "current_thread", max_throttling = "20ms", timer_policy = "never_early", start_paused = true, crate = "my::tempo""#,
            "async fn t() {}",
        );
        assert!(
            out.contains("max_throttling (:: core :: time :: Duration :: from_micros (20000u64))")
        );
        assert!(out.contains("my :: tempo :: runtime :: TimerPolicy :: NeverEarly"));
        assert!(out.contains("start_paused (true)"));
        assert!(out.contains("my :: tempo :: runtime :: Builder"));
        assert!(out.contains("# [:: core :: prelude :: v1 :: test]"));
    }

    #[test]
    fn durations_in_each_unit() {
        for (text, micros) in [("1s", 1_000_000u64), ("5ms", 5_000), ("1500us", 1_500)] {
            let out = expansion(Kind::Main, &format!("max_throttling = {text:?}"), MAIN);
            assert!(
                out.contains(&format!("from_micros ({micros}u64)")),
                "{text}: {out}"
            );
        }
    }

    #[test]
    fn unknown_argument_lists_the_valid_ones() {
        let msg = error_of(Kind::Main, "max_throttle = \"20ms\"", MAIN);
        assert!(msg.contains("unknown argument `max_throttle`"), "{msg}");
        assert!(msg.contains(VALID_ARGUMENTS), "{msg}");
    }

    #[test]
    fn other_flavors_are_refused() {
        let msg = error_of(Kind::Main, "flavor = \"multi_thread\"", MAIN);
        assert!(msg.contains("only flavor is \"current_thread\""), "{msg}");
        let msg = error_of(Kind::Test, "worker_threads = 4", "async fn t() {}");
        assert!(msg.contains("one thread"), "{msg}");
    }

    #[test]
    fn bad_values_say_what_is_accepted() {
        let msg = error_of(Kind::Main, "max_throttling = \"20\"", MAIN);
        assert!(msg.contains("duration string"), "{msg}");
        let msg = error_of(Kind::Main, "max_throttling = 20", MAIN);
        assert!(msg.contains("duration string"), "{msg}");
        let msg = error_of(Kind::Main, "max_throttling = \"2s\"", MAIN);
        assert!(msg.contains("out of range"), "{msg}");
        let msg = error_of(Kind::Main, "timer_policy = \"late\"", MAIN);
        assert!(msg.contains("never_early"), "{msg}");
        let msg = error_of(Kind::Main, "start_paused = \"yes\"", MAIN);
        assert!(msg.contains("`true` or `false`"), "{msg}");
        let msg = error_of(Kind::Main, "start_paused", MAIN);
        assert!(msg.contains("expected `name = value`"), "{msg}");
        let msg = error_of(
            Kind::Main,
            "start_paused = true, start_paused = false",
            MAIN,
        );
        assert!(msg.contains("`start_paused` is given twice"), "{msg}");
    }

    #[test]
    fn function_shape_errors() {
        let msg = error_of(Kind::Main, "", "fn main() {}");
        assert!(msg.contains("`async` keyword is missing"), "{msg}");
        let msg = error_of(Kind::Test, "", "async fn t(x: u32) {}");
        assert!(msg.contains("cannot take arguments"), "{msg}");
        let msg = error_of(Kind::Test, "", "#[test] async fn t() {}");
        assert!(msg.contains("second `#[test]`"), "{msg}");
    }

    #[test]
    fn recovery_keeps_a_synchronous_function() {
        let out = expand(
            Kind::Main,
            "bogus = 1".parse().unwrap(),
            MAIN.parse().unwrap(),
        )
        .to_string();
        assert!(
            out.contains("fn main ()") && !out.contains("async"),
            "{out}"
        );
    }
}
