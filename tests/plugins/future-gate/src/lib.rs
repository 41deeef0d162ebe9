//! A gate from the future: it targets `passepartout:plugin@0.2.0`, which this host does not
//! link. The audit must say so; the loader must refuse it.

wit_bindgen::generate!({
    inline: "
        package passepartout:plugin@0.2.0;
        interface gate {
            check: func(action: string) -> bool;
        }
        world future-gate {
            export gate;
        }
    ",
});

struct Future;

impl exports::passepartout::plugin::gate::Guest for Future {
    fn check(action: String) -> bool {
        action.is_empty()
    }
}

#[cfg(target_arch = "wasm32")]
export!(Future);
