//! `wabp:plugin/input`: clicks, keys and text as a person's input, granted
//! by the `input` capability.

use wabp_model::plugin::MouseButton as CoreButton;

use super::{HostState, core_modifiers};
use crate::bindings::action::wabp::plugin::input::Host;
use crate::bindings::types::{HostError, Modifiers, MouseButton};
use crate::manifest::Capability;

fn core_button(b: MouseButton) -> CoreButton {
    match b {
        MouseButton::None => CoreButton::None,
        MouseButton::Left => CoreButton::Left,
        MouseButton::Right => CoreButton::Right,
        MouseButton::Middle => CoreButton::Middle,
    }
}

impl Host for HostState {
    async fn mouse_move(&mut self, x: f64, y: f64) -> Result<(), HostError> {
        Ok(self
            .granted_page(Capability::Input)?
            .mouse_move(x, y)
            .await?)
    }
    async fn mouse_down(
        &mut self,
        x: f64,
        y: f64,
        button: MouseButton,
        click_count: u32,
        modifiers: Modifiers,
    ) -> Result<(), HostError> {
        let page = self.granted_page(Capability::Input)?;
        Ok(page
            .mouse_down(
                x,
                y,
                core_button(button),
                click_count,
                core_modifiers(modifiers),
            )
            .await?)
    }
    async fn mouse_up(
        &mut self,
        x: f64,
        y: f64,
        button: MouseButton,
        click_count: u32,
        modifiers: Modifiers,
    ) -> Result<(), HostError> {
        let page = self.granted_page(Capability::Input)?;
        Ok(page
            .mouse_up(
                x,
                y,
                core_button(button),
                click_count,
                core_modifiers(modifiers),
            )
            .await?)
    }
    async fn mouse_wheel(
        &mut self,
        x: f64,
        y: f64,
        delta_x: f64,
        delta_y: f64,
        modifiers: Modifiers,
    ) -> Result<(), HostError> {
        let page = self.granted_page(Capability::Input)?;
        Ok(page
            .mouse_wheel(x, y, delta_x, delta_y, core_modifiers(modifiers))
            .await?)
    }
    async fn key_down(&mut self, key: String, modifiers: Modifiers) -> Result<(), HostError> {
        Ok(self
            .granted_page(Capability::Input)?
            .key_down(&key, core_modifiers(modifiers))
            .await?)
    }
    async fn key_up(&mut self, key: String, modifiers: Modifiers) -> Result<(), HostError> {
        Ok(self
            .granted_page(Capability::Input)?
            .key_up(&key, core_modifiers(modifiers))
            .await?)
    }
    async fn key_press(&mut self, key: String, modifiers: Modifiers) -> Result<(), HostError> {
        Ok(self
            .granted_page(Capability::Input)?
            .key_press(&key, core_modifiers(modifiers))
            .await?)
    }
    async fn insert_text(&mut self, text: String) -> Result<(), HostError> {
        Ok(self
            .granted_page(Capability::Input)?
            .insert_text(&text)
            .await?)
    }
    async fn pause(&mut self, ms: u32) -> Result<(), HostError> {
        let page = self.granted_page(Capability::Input)?;
        // Never past the call's deadline.
        let left = self
            .deadline
            .saturating_duration_since(std::time::Instant::now())
            .as_millis();
        let ms = u32::try_from(left).map_or(ms, |left| ms.min(left));
        Ok(page.pause(ms).await?)
    }
}
